//go:build !leasehold_no_redis

package storeurl

import "github.com/leasehold-go/leasehold/redis/goredis"

// redlockRow is Redlock over independent Redis masters, over go-redis; the
// build tag leasehold_no_redis leaves it out, with Redis
// (redlock_leftout.go).
func redlockRow() Kind {
	return Kind{
		Name: "redlock", Title: "Redlock", Schemes: []string{"redlock"},
		Package: "redis/redlock", Adapters: []string{"redis/goredis", "redis/rueidis"},
		URLs:     []string{"redlock://h1:p1,h2:p2,h3:p3"},
		Usage:    "redlock://host1:port,host2:port,...",
		CheckURL: goredis.CheckRedlockURL, Open: openWith(goredis.OpenRedlockURL),
		FaultBackends: []string{"redlock"},
		Servers:       []string{"redis"},
		BuildTag:      "leasehold_no_redis",
		Token:         "**not a safe fence** (`Info().SafeTokens == false`)",
		Notes:         "quorum of independent masters",
	}
}
