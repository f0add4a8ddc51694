package etcd

import (
	"context"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/internal/testserver"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// newTestStore starts a one-member etcd for t and returns a Store on it,
// with a context that ends after 30 s; all of it is stopped when t ends.
func newTestStore(t *testing.T) (*Store, *clientv3.Client, context.Context) {
	t.Helper()
	c := testserver.NewEtcd(t, testserver.EtcdOptions{})
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	st := New(cli, nil)
	t.Cleanup(func() { _ = st.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return st, cli, ctx
}
