//go:build !leasehold_no_redis

package storeurl

import (
	"log/slog"

	"github.com/redis/go-redis/v9"

	"github.com/leasehold-go/leasehold/redis/goredis"
)

// redisRow is one Redis server, over go-redis; the build tag
// leasehold_no_redis leaves it out, with Redlock (redis_leftout.go).
func redisRow() Kind {
	return Kind{
		Name: "redis", Title: "Redis", Schemes: []string{"redis", "rediss"},
		Package: "redis", Adapters: []string{"redis/goredis", "redis/rueidis"},
		URLs:     []string{"redis://host:port/db"},
		Usage:    "redis://host:port/db    (rediss:// for TLS)",
		CheckURL: goredis.CheckURL, Open: openWith(goredis.OpenURL), LogTo: goRedisLogTo,
		FaultBackends: []string{"redis"},
		Servers:       []string{"redis"},
		BuildTag:      "leasehold_no_redis",
		Token:         "counter in the acquire script, floored by the server's `TIME` so a restart without persistence cannot reuse a token",
		Notes:         "see redis/README.md",
	}
}

// goRedisLogTo sends go-redis's own log lines (failed dials, pool trouble)
// to l, or drops them when l is nil; go-redis has one logger per process.
// Redlock's row shares it: RouteClientLogs calls it once per row.
func goRedisLogTo(l *slog.Logger) {
	if l == nil {
		goredis.SilenceLogger()
		return
	}
	redis.SetLogger(goredis.SlogLogger(l))
}
