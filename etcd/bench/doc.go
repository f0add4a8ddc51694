// Package bench compares leasehold's etcd store with etcd's own
// concurrency.Mutex and the raw floor (the same put-if-absent transaction,
// then a delete, on the same client), side by side against one etcd cluster
// that TestMain starts. It holds benchmarks only; see bench_test.go and the
// README for how to run them.
package bench
