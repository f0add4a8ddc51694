// Package bench compares leasehold's consul store with consul/api's own
// Lock and the raw floor (a KV acquire with a session, then a release),
// side by side against one Consul agent that TestMain starts (a dev agent,
// whose Raft log is in memory, by default). It holds benchmarks only, in
// its own module so that the store never depends on its peers; see
// main_test.go for how to run them.
package bench
