//go:build !leasehold_no_etcd

package storeurl

import "github.com/leasehold-go/leasehold/etcd"

// etcdRow is etcd; the build tag leasehold_no_etcd leaves it out
// (etcd_leftout.go).
func etcdRow() Kind {
	return Kind{
		Name: "etcd", Title: "etcd", Schemes: []string{"etcd"},
		Package:  "etcd",
		URLs:     []string{"etcd://h1:p1,h2:p2"},
		Usage:    "etcd://host:port[,host:port...][/prefix]",
		CheckURL: etcd.CheckURL, Open: openWith(etcd.OpenURL),
		FaultBackends: []string{"etcd"},
		Servers:       []string{"etcd"},
		BuildTag:      "leasehold_no_etcd",
		Token:         "the key's create revision",
		Notes:         "one keepalive per session",
	}
}
