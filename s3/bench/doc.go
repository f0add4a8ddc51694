// Package bench compares leasehold's s3 store with the loop a user would
// write with the AWS SDK alone (PutObject with If-None-Match: *, then
// DeleteObject: the raw floor), side by side against one versitygw that
// TestMain starts. It holds benchmarks only, in its own module; see
// main_test.go for how to run them.
package bench
