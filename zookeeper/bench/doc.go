// Package bench compares leasehold's zookeeper store with go-zookeeper's
// own zk.Lock, a Curator-style lock recipe and the raw floor (create an
// ephemeral node, then delete it), side by side against one 3-member
// ZooKeeper ensemble that TestMain starts. It holds benchmarks only, in
// its own module so that the store never depends on its peers; see
// main_test.go for how to run them.
package bench
