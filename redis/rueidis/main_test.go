package rueidis_test

import (
	"os"
	"testing"

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

func TestMain(m *testing.M) {
	os.Exit(storetest.Main(m, 5, func(s storetest.Servers) { srv, masters, tmp = s.Single, s.Masters, s.Dir }, nil))
}
