//go:build !leasehold_no_consul

package storeurl

import "github.com/leasehold-go/leasehold/consul"

// consulRow is Consul; the build tag leasehold_no_consul leaves it out
// (consul_leftout.go).
func consulRow() Kind {
	return Kind{
		Name: "consul", Title: "Consul", Schemes: []string{"consul"},
		Package: "consul",
		URLs:    []string{"consul://host:port/prefix?token=..."},
		Usage: "consul://host:port[/prefix][?token=T]\n" +
			"                        one agent (usually the local one); the token defaults to $CONSUL_HTTP_TOKEN",
		CheckURL: consul.CheckURL, Open: openWith(consul.OpenURL),
		FaultBackends: []string{"consul"},
		Servers:       []string{"consul"},
		BuildTag:      "leasehold_no_consul",
		Token:         "the entry's ModifyIndex at the lock (a Raft index)",
		Notes:         "one session per TTL class; TTLs under Consul's 10 s session minimum ride a 10 s session",
	}
}
