// Package bench compares leasehold's azblob store with the loop a user
// would write with the Azure SDK alone (acquire a blob lease, release it:
// the raw floor), side by side against one Azurite that TestMain starts. It holds benchmarks only, in its own module. Run them from this folder:
//
//	GOWORK=off go test -run '^$' -bench . -benchtime 1s -args -rounds 3
//
// TestMain (internal/benchcycle's Main) prints the median rates over the rounds and
// the SUMMARY line of scripts/bench-page's summary table after them.
package bench
