package storeurl_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/storeurl"
)

// The server schemes open the real stores: each test starts a throwaway
// server on a free loopback port, opens it by URL, and takes a lease.

// openWhenUp opens rawURL, retrying while the server starts.
func openWhenUp(t *testing.T, rawURL string) leasehold.Store {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		s, err := storeurl.Open(ctx, rawURL)
		cancel()
		if err == nil {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("Open(%q): %v", rawURL, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// useStore takes, inspects and releases a lease on s.
func useStore(t *testing.T, s leasehold.Store, wantName string) {
	t.Helper()
	if got := s.Info().Name; got != wantName {
		t.Errorf("store name %q, want %q", got, wantName)
	}
	ctx := context.Background()
	g, err := s.Acquire(ctx, leasehold.AcquireRequest{Key: "k", Owner: leasehold.NewOwnerID(), Label: "storeurl-test", TTL: 10 * time.Second})
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	h, err := s.Holder(ctx, "k")
	if err != nil || h.Token != g.Token || h.Label != "storeurl-test" {
		t.Errorf("holder: %+v, %v; want token %d", h, err, g.Token)
	}
	if err := s.Release(ctx, g); err != nil {
		t.Errorf("release: %v", err)
	}
}

func TestRedisSchemes(t *testing.T) {
	var hosts []string
	for _, r := range testserver.NewRedisMasters(t, 3, testserver.RedisOptions{}) {
		hosts = append(hosts, r.Addr())
	}
	s := openWhenUp(t, "redis://"+hosts[0]+"/0")
	useStore(t, s, "redis")
	s.Close()
	s = openWhenUp(t, "redlock://"+strings.Join(hosts, ","))
	useStore(t, s, "redlock")
	s.Close()
}

func TestEtcdScheme(t *testing.T) {
	c := testserver.NewEtcd(t, testserver.EtcdOptions{})
	s := openWhenUp(t, c.URL()+"/storeurl-test")
	useStore(t, s, "etcd")
	s.Close()
}

func TestConsulScheme(t *testing.T) {
	c := testserver.NewConsul(t, testserver.ConsulOptions{})
	s := openWhenUp(t, c.URL(0)+"/storeurl-test")
	useStore(t, s, "consul")
	s.Close()
}

func TestZooKeeperScheme(t *testing.T) {
	z := testserver.NewZooKeeper(t, testserver.ZooKeeperOptions{})
	s := openWhenUp(t, z.URL("/storeurl-test"))
	useStore(t, s, "zookeeper")
	s.Close()
}

func TestPostgresSchemeAndMigrate(t *testing.T) {
	u := testserver.NewPostgres(t, testserver.PostgresOptions{}).ConnString()
	s := openWhenUp(t, u) // up, but not migrated yet
	_, err := s.Acquire(context.Background(), leasehold.AcquireRequest{Key: "k", Owner: leasehold.NewOwnerID(), TTL: time.Second})
	if err == nil || !strings.Contains(err.Error(), "migrat") {
		t.Errorf("acquire before the migration: %v, want an error saying to migrate", err)
	}
	s.Close()
	for range 2 { // idempotent
		if err := storeurl.Migrate(context.Background(), u); err != nil {
			t.Fatalf("Migrate: %v", err)
		}
	}
	s = openWhenUp(t, strings.Replace(u, "postgres://", "postgresql://", 1))
	useStore(t, s, "postgres")
	s.Close()
	if _, err := storeurl.Open(context.Background(), u+"&mode=nosuch"); !errors.Is(err, storeurl.ErrBadURL) {
		t.Errorf("postgres URL with a bad mode: %v, want ErrBadURL", err)
	}
	if _, err := storeurl.Open(context.Background(), u+"&cancel=nosuch"); !errors.Is(err, storeurl.ErrBadURL) || !strings.Contains(err.Error(), "cancel") {
		t.Errorf("postgres URL with a bad cancel: %v, want ErrBadURL naming cancel", err)
	}
	s = openWhenUp(t, u+"&cancel=close")
	useStore(t, s, "postgres")
	s.Close()
}

func TestS3SchemeAndMigrate(t *testing.T) {
	v := testserver.NewVersity(t, testserver.VersityOptions{})
	u := "s3://storeurl-test/app?endpoint=" + v.Endpoint() + "&access_key=" + testserver.VersityAccessKey +
		"&secret_key=" + testserver.VersitySecretKey
	migrateThenUse(t, u, "s3")
}

func TestDynamoDBSchemeAndMigrate(t *testing.T) {
	d := testserver.NewDynalite(t, testserver.DynaliteOptions{})
	u := "dynamodb://storeurl-test?endpoint=" + d.Endpoint() + "&access_key=" + testserver.DynaliteAccessKey +
		"&secret_key=" + testserver.DynaliteSecretKey
	migrateThenUse(t, u, "dynamodb")
}

// TestKubeScheme opens kube:// URLs on a real kube-apiserver: a kubeconfig
// and a namespace work; a namespace that does not exist, a refused token
// and a user without RBAC rights on Leases are each a store error naming
// the store, the namespace and the cause.
func TestKubeScheme(t *testing.T) {
	k, kc := storeurl.NewKubeNamespace(t, "storeurl")
	u := "kube:///storeurl?kubeconfig=" + kc
	s := openWhenUp(t, u)
	useStore(t, s, "kube")
	s.Close()
	for _, c := range []struct {
		url   string
		words []string
	}{
		{"kube:///no-such-namespace?kubeconfig=" + kc, []string{"no-such-namespace", "does not exist"}},
		{"kube:///storeurl?kubeconfig=" + storeurl.KubeconfigWithToken(t, k, kc, "not-the-token"), []string{"storeurl", "credentials refused"}},
		{u + "&context=norights", []string{"storeurl", "RBAC denied", "create", testserver.KubeNoRightsUser}},
	} {
		_, err := storeurl.Open(t.Context(), c.url)
		var se *leasehold.StoreError
		if !errors.As(err, &se) || se.Store != "kube" {
			t.Errorf("Open(%q): %v; want a store error of the kube store", c.url, err)
			continue
		}
		for _, w := range c.words {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Open(%q): %q does not say %q", c.url, err, w)
			}
		}
	}
}

func TestMigrateOtherStores(t *testing.T) {
	if err := storeurl.Migrate(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "l.db")); err != nil {
		t.Errorf("Migrate of a sqlite URL: %v", err)
	}
	if err := storeurl.Migrate(context.Background(), "redis://127.0.0.1:1"); !errors.Is(err, storeurl.ErrNoMigration) {
		t.Errorf("Migrate of a redis URL: %v, want ErrNoMigration", err)
	}
	if err := storeurl.Migrate(context.Background(), "nosuch://x"); !errors.Is(err, storeurl.ErrUnknownScheme) {
		t.Errorf("Migrate of an unknown scheme: %v, want ErrUnknownScheme", err)
	}
}

// A server that is not there: the store's own error, naming it.
func TestDeadServers(t *testing.T) {
	port, err := testserver.FreePort() // nothing listens there
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{
		fmt.Sprintf("redis://127.0.0.1:%d", port),
		fmt.Sprintf("redlock://127.0.0.1:%d", port),
		fmt.Sprintf("postgres://postgres@127.0.0.1:%d/x?sslmode=disable&connect_timeout=2", port),
		fmt.Sprintf("etcd://127.0.0.1:%d?dial_timeout=1s", port),
		fmt.Sprintf("zk://127.0.0.1:%d?dial_timeout=1s", port),
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		s, err := storeurl.Open(ctx, u)
		cancel()
		if err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded with no server", u)
			continue
		}
		if !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), strconv.Itoa(port)) {
			t.Errorf("Open(%q): %v; want a store error naming the address", u, err)
		}
	}
}

// migrateThenUse checks that the store at u refuses to open before
// `leasehold migrate`, that Migrate is idempotent, and that the migrated
// store then works under name.
func migrateThenUse(t *testing.T, u, name string) {
	t.Helper()
	if _, err := storeurl.Open(context.Background(), u); err == nil || !strings.Contains(err.Error(), "leasehold migrate") {
		t.Errorf("open before the migration: %v, want an error saying to migrate", err)
	}
	for range 2 { // idempotent
		if err := storeurl.Migrate(context.Background(), u); err != nil {
			t.Fatalf("Migrate: %v", err)
		}
	}
	s := openWhenUp(t, u)
	useStore(t, s, name)
	s.Close()
}
