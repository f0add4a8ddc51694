package goredis_test

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/redis/internal/storetest"
)

// srv is the redis-server of the redis store's tests; masters are the five
// of the redlock tests; tmp holds their folders.
var (
	srv     *testserver.Redis
	masters []*testserver.Redis
	tmp     string
)

// quietLogger drops go-redis's log lines about the servers the tests kill.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	redis.SetLogger(quietLogger{}) // the test binary's logger, not the library's
	os.Exit(storetest.Main(m, 5, func(s storetest.Servers) { srv, masters, tmp = s.Single, s.Masters, s.Dir }, nil,
		// go-redis redials a dead master from a goroutine that sleeps 1 s
		// between tries and ends with its pool; it is the client's, not ours.
		"github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"))
}
