// Package bench compares leasehold's consul store with consul/api's own
// Lock and the raw floor (a KV acquire with a session, then a release),
// side by side against one Consul agent that TestMain starts (a dev agent,
// whose Raft log is in memory, by default). It holds benchmarks only, in its own module so that the store never
// depends on its peers:
//
//	GOWORK=off go test -run '^$' -bench . -benchtime 1s -args -rounds 3
//
// in this folder runs them; -servers 3 runs on a cluster of 3 server agents
// (with their Raft logs on disk) instead of one dev agent. The medians over
// the rounds and the page's SUMMARY line are printed at the end.
package bench
