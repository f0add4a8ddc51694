package goredis_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/leasehold-go/leasehold/redis/internal/redistest"
)

// srv is the redis-server of the redis store's tests; masters are the five
// of the redlock tests. TestMain starts them and stops them afterwards.
var (
	srv     *redistest.Server
	masters []*redistest.Server
	tmp     string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

// quietLogger drops go-redis's log lines about masters the tests killed.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

func run(m *testing.M) int {
	redis.SetLogger(quietLogger{}) // the test process's own logger, not the library's
	var err error
	tmp, err = os.MkdirTemp("", "leasehold-goredis-")
	if err != nil {
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
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: goroutines leaked:", err)
			return 1
		}
	}
	return code
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// restartAll restarts every server in ss, without persistence.
func restartAll(t testing.TB, ss ...*redistest.Server) {
	t.Helper()
	for _, s := range ss {
		if err := s.Restart(); err != nil {
			t.Fatalf("restart redis-server on %s: %v", s.Addr(), err)
		}
	}
}
