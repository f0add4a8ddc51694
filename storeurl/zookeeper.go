//go:build !leasehold_no_zookeeper

package storeurl

import "github.com/leasehold-go/leasehold/zookeeper"

// zookeeperRow is ZooKeeper; the build tag leasehold_no_zookeeper leaves it
// out (zookeeper_leftout.go).
func zookeeperRow() Kind {
	return Kind{
		Name: "zookeeper", Title: "ZooKeeper", Schemes: []string{"zk", "zookeeper"},
		Package:  "zookeeper",
		URLs:     []string{"zk://h1:p1,h2:p2/chroot"},
		Usage:    "zk://[user:pw@]host:port[,host:port...][/chroot] (also zookeeper://)",
		CheckURL: zookeeper.CheckURL, Open: openWith(zookeeper.OpenURL),
		FaultBackends: []string{"zookeeper"},
		Servers:       []string{"zookeeper"},
		BuildTag:      "leasehold_no_zookeeper",
		Token:         "the holder node's creation zxid (Czxid)",
		Notes:         "ZooKeeper 3.5.3+; one session per TTL class; TTL from the minimum session timeout to half the maximum; grants live in the acquiring process's session",
	}
}
