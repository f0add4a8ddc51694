//go:build !leasehold_no_etcd

package storeurl

import (
	"context"
	"net/url"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/etcd"
)

// etcdRow is etcd; the build tag leasehold_no_etcd leaves it out
// (etcd_leftout.go).
func etcdRow() Kind {
	return Kind{
		Name: "etcd", Title: "etcd", Schemes: []string{"etcd"},
		Package:  "etcd",
		URLs:     []string{"etcd://h1:p1,h2:p2"},
		Usage:    "etcd://host:port[,host:port...][/prefix]",
		CheckURL: checkEtcd, Open: openEtcd,
		FaultBackends: []string{"etcd"},
		Servers:       []string{"etcd"},
		BuildTag:      "leasehold_no_etcd",
		Token:         "the key's create revision",
		Notes:         "one keepalive per session",
	}
}

func checkEtcd(rawURL string) error { return etcd.CheckURL(rawURL) }

func openEtcd(ctx context.Context, rawURL string, _ *url.URL) (leasehold.Store, error) {
	s, err := etcd.OpenURL(ctx, rawURL)
	if err != nil {
		return nil, err // never the typed nil *Store: a non-nil Store with its error
	}
	return s, nil
}
