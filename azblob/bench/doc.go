// Package bench compares leasehold's azblob store with the loop a user
// would write with the Azure SDK alone (acquire a blob lease, release it:
// the raw floor), side by side against one Azurite that TestMain starts.
// It holds benchmarks only, in its own module; see main_test.go for how to
// run them.
package bench
