package storetest

import (
	"context"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/leasehold-go/leasehold/internal/testserver"
)

// Servers are the redis-servers one test binary shares: Single for the
// redis store, Masters for Redlock, all with their folders under Dir.
type Servers struct {
	Single  *testserver.Redis
	Masters []*testserver.Redis
	Dir     string
}

// Main runs m with one server and n masters, started in a temporary folder
// before the tests and stopped after them; use hands them to the tests
// before they run and after, if not nil, runs once they ended. A run that
// passed fails if goroutines leaked, except those with one of the ignore
// functions on their stack (a client library's own). It returns the exit
// code for os.Exit.
func Main(m *testing.M, n int, use func(Servers), after func(), ignore ...string) int {
	dir, err := os.MkdirTemp("", "leasehold-redis-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	all := Servers{Dir: dir}
	ss, err := testserver.StartRedisMasters(context.Background(), n+1, testserver.RedisOptions{Dir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: start redis-server:", err)
		return 1
	}
	for _, s := range ss {
		defer s.Stop()
	}
	all.Single, all.Masters = ss[0], ss[1:]
	use(all)
	code := m.Run()
	if after != nil {
		after()
	}
	if code == 0 {
		opts := make([]goleak.Option, 0, len(ignore))
		for _, f := range ignore {
			opts = append(opts, goleak.IgnoreAnyFunction(f))
		}
		if err := goleak.Find(opts...); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: goroutines leaked:", err)
			return 1
		}
	}
	return code
}
