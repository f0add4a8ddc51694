package storeurl

import (
	"context"
	"errors"
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the README's store table from Stores")

const (
	tableBegin = "<!-- stores: generated from storeurl.Stores; go test ./storeurl -run TestREADMETable -update -->\n"
	tableEnd   = "<!-- stores: end -->\n"
)

// TestREADMETable checks the README's store table against the store table.
func TestREADMETable(t *testing.T) {
	readme := readREADME(t)
	i, j := strings.Index(readme, tableBegin), strings.Index(readme, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no store table between %q and %q", readmePath, tableBegin, tableEnd)
	}
	got, want := readme[i+len(tableBegin):j], MarkdownTable()
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(readmePath, []byte(readme[:i+len(tableBegin)]+want+readme[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the README's store table differs from storeurl.Stores (run go test ./storeurl -run TestREADMETable -update):\n got:\n%s\nwant:\n%s", got, want)
}

// TestTable checks each row for what the rest of the project relies on.
func TestTable(t *testing.T) {
	seen := map[string]string{}
	for _, k := range Stores() {
		if k.Name == "" || k.Title == "" || k.Package == "" || len(k.Schemes) == 0 || len(k.URLs) == 0 || k.Usage == "" || k.CheckURL == nil || k.Open == nil || k.Token == "" {
			t.Errorf("row %q is missing a field: %+v", k.Name, k)
		}
		for _, s := range k.Schemes {
			if prev, dup := seen[s]; dup {
				t.Errorf("scheme %q names both %s and %s", s, prev, k.Name)
			}
			seen[s] = k.Name
			if got, ok := Lookup(s); !ok || got.Name != k.Name {
				t.Errorf("Lookup(%q) = %q, %v; want %q", s, got.Name, ok, k.Name)
			}
		}
		if !strings.HasPrefix(strings.TrimSpace(k.Usage), k.Schemes[0]+":") {
			t.Errorf("row %q: usage line %q does not start with its scheme", k.Name, k.Usage)
		}
		for _, u := range k.URLs {
			if scheme, _, _ := strings.Cut(u, ":"); !contains(k.Schemes, scheme) {
				t.Errorf("row %q: example URL %q is not one of its schemes", k.Name, u)
			}
		}
	}
}

// TestMigrateFollowsTable checks that every store without a migration says
// so with ErrNoMigration, before contacting anything.
func TestMigrateFollowsTable(t *testing.T) {
	for _, k := range Stores() {
		if k.Migrate != nil {
			continue
		}
		err := Migrate(context.Background(), k.Schemes[0]+"://127.0.0.1:1")
		if !errors.Is(err, ErrNoMigration) || !strings.Contains(err.Error(), k.Name) {
			t.Errorf("Migrate(%s://...) = %v; want ErrNoMigration naming %s", k.Schemes[0], err, k.Name)
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestGoodURLs checks that each store's CheckURL accepts URLs of every
// form its package documents.
func TestGoodURLs(t *testing.T) {
	for _, u := range []string{
		"sqlite:///tmp/x.db", "file:///tmp/x.db", "sqlite:rel/x.db", "memory://",
		"redis://127.0.0.1:6379/0", "rediss://u:p@127.0.0.1:6380/2?prefix=app:",
		"redlock://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3/0?prefix=x",
		"postgres://u@127.0.0.1/db?mode=advisory", "postgresql://u:p@127.0.0.1:5432/db?sslmode=disable",
		"etcd://127.0.0.1:2379", "etcd://u:p@127.0.0.1:2379,127.0.0.1:2380/app?dial_timeout=2s",
		"consul://127.0.0.1:8500", "consul://localhost/app/locks?token=t&dc=dc1&idle=10s&dial_timeout=2s", "consul://[::1]:8500/p",
		"zk://127.0.0.1:2181", "zookeeper://u:p@127.0.0.1:2181,127.0.0.1:2182/locks/app?dial_timeout=2s&idle=1m",
		"azblob://acct/locks", "azblob://devstoreaccount1/c?endpoint=http://127.0.0.1:10000/devstoreaccount1&auth=key&key=a2V5",
		"s3://bucket", "s3://bucket/a/prefix?endpoint=http://127.0.0.1:7070&region=us-east-1&access_key=k&secret_key=s",
		"kube://", "kube:///ns", "kube:///ns?kubeconfig=/etc/kube.yaml&context=prod", "kube://in-cluster/", "kube://in-cluster/ns",
	} {
		k, ok := Lookup(strings.Split(u, ":")[0])
		if !ok {
			t.Fatalf("no row for %q", u)
		}
		if err := k.CheckURL(u); err != nil {
			t.Errorf("%s CheckURL(%q) = %v; want nil", k.Name, u, err)
		}
	}
}

// TestBadURLs checks that a URL wrong in any part is ErrBadURL, from Open
// and Migrate alike, before anything is contacted (the hosts named here
// do not exist, and the context is already cancelled).
func TestBadURLs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, u := range []string{
		"sqlite://host/path.db",
		"memory://x",
		"redis://127.0.0.1:notaport/0",
		"redis://127.0.0.1:6379/notadb",
		"redis://127.0.0.1:6379/0?prefix=%zz",
		"redlock://127.0.0.1:1,127.0.0.1/0",
		"redlock://127.0.0.1:1/0?nosuch=1",
		"postgres://u@127.0.0.1/db?mode=bogus",
		"postgresql://u@127.0.0.1/db?cancel=sometimes",
		"etcd://",
		"etcd://127.0.0.1",
		"etcd://127.0.0.1:2379?dial_timeout=soon",
		"consul://", "consul://u:p@127.0.0.1:8500", "consul://127.0.0.1:port", "consul://127.0.0.1:8500?timeout=1s",
		"azblob://acct", "azblob://acct/c/d", "azblob://acct/c?auth=magic",
		"s3://", "s3://b?endpoint=127.0.0.1:7070", "s3://b?access_key=k", "s3://b?nosuch=1",
		"zk://", "zk://127.0.0.1", "zk://127.0.0.1:2181?idle=soon", "zk://127.0.0.1:2181/zookeeper",
		"kube://host/ns", "kube:///Not_A_Namespace", "kube:///ns?nosuch=1", "kube://in-cluster/ns?context=x", "kube://u:p@/ns",
	} {
		if s, err := Open(ctx, u); !errors.Is(err, ErrBadURL) {
			if s != nil {
				_ = s.Close()
			}
			t.Errorf("Open(%q) = %v; want ErrBadURL", u, err)
		}
		if k, _ := Lookup(strings.Split(u, ":")[0]); k.Migrate != nil {
			if err := Migrate(ctx, u); !errors.Is(err, ErrBadURL) {
				t.Errorf("Migrate(%q) = %v; want ErrBadURL", u, err)
			}
		}
	}
}
