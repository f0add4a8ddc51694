package stall

// Retryable exposes retryable to the package's external tests.
var Retryable = retryable
