//go:build leasehold_no_zookeeper

package storeurl

// zookeeperRow names ZooKeeper in a binary built with -tags leasehold_no_zookeeper:
// its URLs are refused with ErrLeftOut. The row itself is in zookeeper.go.
func zookeeperRow() Kind {
	return leftOut("zookeeper", "ZooKeeper", "leasehold_no_zookeeper", "zk", "zookeeper")
}
