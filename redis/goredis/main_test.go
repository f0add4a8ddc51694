package goredis_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/leasehold-go/leasehold/redis/internal/redistest"
)

// srv is the redis-server of the redis store's tests; masters are the five
// of the redlock tests; tmp holds their folders. TestMain starts them and
// stops them afterwards, then checks for leaked goroutines.
var (
	srv     *redistest.Server
	masters []*redistest.Server
	tmp     string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

// quietLogger drops go-redis's log lines about the servers the tests kill.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

func run(m *testing.M) int {
	redis.SetLogger(quietLogger{}) // the test binary's logger, not the library's
	var err error
	if tmp, err = os.MkdirTemp("", "leasehold-goredis-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	if srv, err = redistest.Start(tmp); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: start redis-server:", err)
		return 1
	}
	defer srv.Stop()
	for range 5 {
		s, err := redistest.Start(tmp)
		if err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: start redis-server:", err)
			return 1
		}
		defer s.Stop()
		masters = append(masters, s)
	}
	code := m.Run()
	if code == 0 {
		// go-redis redials a dead master from a goroutine that sleeps 1 s
		// between tries and ends with its pool; it is the client's, not ours.
		if err := goleak.Find(goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial")); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: goroutines leaked:", err)
			return 1
		}
	}
	return code
}
