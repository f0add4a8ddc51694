package rueidis_test

import (
	"fmt"
	"os"
	"testing"

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

func run(m *testing.M) int {
	var err error
	if tmp, err = os.MkdirTemp("", "leasehold-rueidis-"); err != nil {
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
