// Package bench compares leasehold's s3 store with the loop a user would
// write with the AWS SDK alone (PutObject with If-None-Match: *, then
// DeleteObject: the raw floor), side by side against one versitygw that
// TestMain starts. It holds benchmarks only, in its own module. From this folder,
//
//	GOWORK=off go test -run '^$' -bench . -benchtime 1s -args -rounds 3
//
// runs them all in 3 interleaved rounds, then prints the median rates and
// the SUMMARY line that scripts/bench-page's summary table reads.
package bench
