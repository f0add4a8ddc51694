// Package bench compares leasehold's kube store with its peer, client-go's
// tools/leaderelection over a resourcelock.LeaseLock (the lock most Go
// controllers use), and with the loop a user would write with client-go
// alone (the raw floor: take a Lease with an Update on the resourceVersion
// last seen, free it with another), side by side against one
// kube-apiserver (over its own etcd) that TestMain starts. It holds
// benchmarks only, in its own module. From this folder,
//
//	GOWORK=off go test -run '^$' -bench Cycle -benchtime 500ms -args -rounds 3
//
// runs the cycles in 3 interleaved rounds, then prints the median rates
// and the SUMMARY lines that scripts/bench-page's summary table reads;
//
//	GOWORK=off go test -run '^$' -bench Calls -benchtime 1x
//
// counts the HTTP requests one cycle of each sends, by verb, and
//
//	GOWORK=off go test -run '^$' -bench Requests -benchtime 1x
//
// prints where a cycle's time goes: the CPU per cycle of the client, the
// apiserver and etcd, and each request's time and bytes.
package bench
