// Package bench compares leasehold's zookeeper store with go-zookeeper's
// own zk.Lock, a Curator-style lock recipe and the raw floor (create an
// ephemeral node, then delete it), side by side against one 3-member
// ZooKeeper ensemble that TestMain starts. It holds benchmarks only, in its own module so that the store never
// depends on its peers. To run them all, with 8 goroutines on one key too
// (-hot: the blocking recipes zk.Lock, the Curator recipe's watch on its
// predecessor, the store's AcquireWait), in this folder:
//
//	GOWORK=off go test -run '^$' -bench . -benchtime 1s -args -rounds 3 -hot
//
// Last come the medians over the rounds and scripts/bench-page's SUMMARY line.
package bench
