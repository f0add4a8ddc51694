package storeurl

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

// failSecret is the password in the failing URLs: no error may show it.
const failSecret = "n0tTheSecret"

// failingURLs returns, for every row of the store table by name, URLs
// whose opening must fail: no server on a closed loopback port, a bucket
// or database that does not exist, wrong credentials, a missing connection
// string, a file that is not a database or is in a missing folder. The
// real servers come from testserver.
//
// Long function: one literal list per store, next to each other.
func failingURLs(t *testing.T) map[string][]string {
	ports, err := testserver.FreePorts(3) // nothing listens there
	if err != nil {
		t.Fatal(err)
	}
	closed := fmt.Sprintf("127.0.0.1:%d", ports[0])
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(junk, []byte("not a database, not at all"), 0o600); err != nil {
		t.Fatal(err)
	}
	redis := testserver.NewRedis(t, testserver.RedisOptions{Args: []string{"--requirepass", "right"}})
	pg := testserver.NewPostgres(t, testserver.PostgresOptions{})
	pgURL, err := url.Parse(pg.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	pgURL.Path = "/no_such_database"
	s3 := testserver.NewVersity(t, testserver.VersityOptions{})
	if err := s3.CreateBucket("there"); err != nil {
		t.Fatal(err)
	}
	s3Creds := "&region=" + testserver.VersityRegion + "&access_key=" + testserver.VersityAccessKey + "&secret_key="
	ddb := testserver.NewDynalite(t, testserver.DynaliteOptions{})
	ddbCreds := "&region=" + testserver.DynaliteRegion + "&access_key=" + testserver.DynaliteAccessKey + "&secret_key="
	kube := failingKube(t, dir)
	t.Setenv("AZURE_STORAGE_CONNECTION_STRING", "")
	return map[string][]string{
		"sqlite": {"sqlite://" + junk, "file://" + junk, "sqlite://" + filepath.Join(dir, "no", "such", "dir", "x.db")},
		"memory": {"memory://" + closed},
		"redis": {
			"redis://" + closed + "/0", "rediss://" + closed + "/0",
			"redis://:" + failSecret + "@" + redis.Addr() + "/0", // the wrong password
		},
		"redlock": {fmt.Sprintf("redlock://:%s@%s,127.0.0.1:%d,127.0.0.1:%d/0", failSecret, closed, ports[1], ports[2])},
		"postgres": {
			"postgres://postgres:" + failSecret + "@" + closed + "/x?sslmode=disable&connect_timeout=2",
			"postgresql://postgres:" + failSecret + "@" + closed + "/x?sslmode=disable&connect_timeout=2&mode=advisory",
			pgURL.String(),
		},
		"etcd":      {"etcd://u:" + failSecret + "@" + closed + "/x?dial_timeout=1s"},
		"consul":    {"consul://" + closed + "/x?dial_timeout=1s&token=" + failSecret},
		"zookeeper": {"zk://u:" + failSecret + "@" + closed + "/x?dial_timeout=1s", "zookeeper://" + closed + "/x?dial_timeout=1s"},
		"azblob":    {"azblob://acct/c?auth=connstr"},
		"s3": {
			"s3://lh/p?endpoint=http://" + closed + s3Creds + failSecret,
			"s3://no-such-bucket/lh?endpoint=" + s3.Endpoint() + s3Creds + testserver.VersitySecretKey,
			"s3://there/lh?endpoint=" + s3.Endpoint() + s3Creds + failSecret,
		},
		"dynamodb": {
			"dynamodb://leases?endpoint=http://" + closed + ddbCreds + failSecret,
			"dynamodb://no-such-table?endpoint=" + ddb.Endpoint() + ddbCreds + failSecret,
		},
		"kube": kube,
		"remote": {
			"leasehold+http://" + closed, "leasehold+https://" + closed + "/prefix",
			"leasehold+http://u:" + failSecret + "@" + closed,                                   // userinfo: refused
			"leasehold+http://" + closed + "?token_file=" + filepath.Join(dir, "no-such-token"), // no token file
			"leasehold+" + s3.Endpoint(),                                                        // a server that is not leasehold's
		},
	}
}

// failingKube returns kube:// URLs that must fail on a real kube-apiserver:
// a kubeconfig that is not there, a namespace that does not exist, a
// refused token (failSecret) and a user without RBAC rights on Leases.
func failingKube(t *testing.T, dir string) []string {
	k, kc := NewKubeNamespace(t, "there")
	refused := KubeconfigWithToken(t, k, kc, failSecret)
	return []string{
		"kube:///there?kubeconfig=" + filepath.Join(dir, "no-such-kubeconfig"),
		"kube:///no-such-namespace?kubeconfig=" + kc,
		"kube:///there?kubeconfig=" + refused,
		"kube:///there?context=norights&kubeconfig=" + kc,
	}
}

// TestOpenFailsCleanly opens, for every row of the store table, URLs that
// must fail, through the row's own Open (when its CheckURL passes) and
// through Open: each must return a nil store (not a typed nil in a non-nil
// interface, which a caller's Close would panic on), an error that is a
// store error or a bad URL, that names no password, and must not panic.
func TestOpenFailsCleanly(t *testing.T) {
	urls := failingURLs(t)
	for _, k := range Stores() {
		list := urls[k.Name]
		if len(list) == 0 {
			t.Errorf("row %q: no failing URLs in failingURLs; add some", k.Name)
		}
		for _, u := range list {
			if k.CheckURL(u) == nil {
				parsed, err := url.Parse(u)
				if err != nil {
					t.Fatal(err)
				}
				checkFailedOpen(t, k.Name+" row Open", u, func(ctx context.Context) (leasehold.Store, error) {
					return k.Open(ctx, u, parsed)
				})
			}
			checkFailedOpen(t, "Open", u, func(ctx context.Context) (leasehold.Store, error) { return Open(ctx, u) })
		}
	}
}

// checkFailedOpen calls open and checks that it failed cleanly.
func checkFailedOpen(t *testing.T, what, u string, open func(context.Context) (leasehold.Store, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var (
		s         leasehold.Store
		err       error
		recovered any
	)
	func() {
		defer func() { recovered = recover() }()
		s, err = open(ctx)
	}()
	switch {
	case recovered != nil:
		t.Errorf("%s(%q) panicked: %v", what, u, recovered)
	case err == nil:
		t.Errorf("%s(%q) succeeded; want an error", what, u)
	case s != nil:
		t.Errorf("%s(%q) returned a non-nil store (%T) with its error %v", what, u, s, err)
	case !errors.Is(err, leasehold.ErrStore) && !errors.Is(err, ErrBadURL):
		t.Errorf("%s(%q): %v; want a store error or ErrBadURL", what, u, err)
	case strings.Contains(err.Error(), failSecret):
		t.Errorf("%s(%q): error %q shows the password", what, u, err)
	case ctx.Err() != nil:
		t.Errorf("%s(%q) took until its context ended: %v", what, u, err)
	}
	if s != nil && recovered == nil {
		func() {
			defer func() { _ = recover() }() // the typed nil's Close may panic: that is the bug reported above
			_ = s.Close()
		}()
	}
}
