//go:build !leasehold_no_zookeeper

package storeurl

import (
	"context"
	"net/url"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/zookeeper"
)

// zookeeperRow is ZooKeeper; the build tag leasehold_no_zookeeper leaves it
// out (zookeeper_leftout.go).
func zookeeperRow() Kind {
	return Kind{
		Name: "zookeeper", Title: "ZooKeeper", Schemes: []string{"zk", "zookeeper"},
		Package:  "zookeeper",
		URLs:     []string{"zk://h1:p1,h2:p2/chroot"},
		Usage:    "zk://[user:pw@]host:port[,host:port...][/chroot] (also zookeeper://)",
		CheckURL: checkZooKeeper, Open: openZooKeeper,
		FaultBackends: []string{"zookeeper"},
		Servers:       []string{"zookeeper"},
		BuildTag:      "leasehold_no_zookeeper",
		Token:         "the holder node's creation zxid (Czxid)",
		Notes:         "ZooKeeper 3.5.3+; one session per TTL class; TTL from the minimum session timeout to half the maximum; grants live in the acquiring process's session",
	}
}

func checkZooKeeper(rawURL string) error { return zookeeper.CheckURL(rawURL) }

func openZooKeeper(ctx context.Context, rawURL string, _ *url.URL) (leasehold.Store, error) {
	s, err := zookeeper.OpenURL(ctx, rawURL)
	if err != nil {
		return nil, err // never the typed nil *Store: a non-nil Store with its error
	}
	return s, nil
}
