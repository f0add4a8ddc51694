package rueidis_test

import (
	"os"
	"testing"

	"github.com/leasehold-go/leasehold/redis/internal/redistest"
)

// srv is the redis-server of the redis store's tests; masters are the five
// of the redlock tests; tmp holds their folders.
var (
	srv     *redistest.Server
	masters []*redistest.Server
	tmp     string
)

func TestMain(m *testing.M) {
	os.Exit(redistest.Main(m, 5, func(s redistest.Servers) { srv, masters, tmp = s.Single, s.Masters, s.Dir }, nil))
}
