package storeurl_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/storeurl"
)

// The server schemes open the real stores: each test starts a throwaway
// server on a free loopback port, opens it by URL, and takes a lease.

// findBin finds a server binary in LEASEHOLD_BIN, ~/.cache/leasehold/bin,
// extra folders or PATH; a missing one fails the test naming the install
// script.
func findBin(t *testing.T, name, script string, extra ...string) string {
	t.Helper()
	var dirs []string
	if d := os.Getenv("LEASEHOLD_BIN"); d != "" {
		dirs = append(dirs, d)
	}
	if h, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(h, ".cache", "leasehold", "bin"))
	}
	for _, d := range append(dirs, extra...) {
		if p := filepath.Join(d, name); isExec(p) {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	t.Fatalf("%s not found (looked in %s and PATH); run scripts/install/%s", name, strings.Join(append(dirs, extra...), ", "), script)
	return ""
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startServer starts a server process in its own process group, killed
// when the test ends.
func startServer(t *testing.T, cred *syscall.Credential, dir, bin string, args ...string) {
	t.Helper()
	log, err := os.Create(filepath.Join(dir, filepath.Base(bin)+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: cred}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		log.Close()
	})
}

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
	bin := findBin(t, "redis-server", "redis.sh")
	dir := t.TempDir()
	var hosts []string
	for i := range 3 {
		port := freePort(t)
		d := filepath.Join(dir, strconv.Itoa(i))
		os.Mkdir(d, 0o700)
		startServer(t, nil, d, bin, "--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", d, "--save", "", "--appendonly", "no")
		hosts = append(hosts, fmt.Sprintf("127.0.0.1:%d", port))
	}
	s := openWhenUp(t, "redis://"+hosts[0]+"/0")
	useStore(t, s, "redis")
	s.Close()
	s = openWhenUp(t, "redlock://"+strings.Join(hosts, ","))
	useStore(t, s, "redlock")
	s.Close()
}

func TestEtcdScheme(t *testing.T) {
	bin := findBin(t, "etcd", "etcd.sh")
	dir := t.TempDir()
	client, peer := freePort(t), freePort(t)
	cu, pu := fmt.Sprintf("http://127.0.0.1:%d", client), fmt.Sprintf("http://127.0.0.1:%d", peer)
	startServer(t, nil, dir, bin, "--name", "n0", "--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", cu, "--advertise-client-urls", cu,
		"--listen-peer-urls", pu, "--initial-advertise-peer-urls", pu,
		"--initial-cluster", "n0="+pu, "--log-level", "warn")
	s := openWhenUp(t, fmt.Sprintf("etcd://127.0.0.1:%d/storeurl-test", client))
	useStore(t, s, "etcd")
	s.Close()
}

func TestPostgresSchemeAndMigrate(t *testing.T) {
	pgBin := filepath.Dir(findBin(t, "postgres", "postgres.sh", "/usr/lib/postgresql/15/bin"))
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root needs a postgres user to run the server as: %v; run scripts/install/postgres.sh", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}
	}
	dir, err := os.MkdirTemp("", "storeurl-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755) // the server's user must enter it
	if cred != nil {
		os.Chown(dir, int(cred.Uid), int(cred.Gid))
	}
	initdb := exec.Command(filepath.Join(pgBin, "initdb"), "-D", filepath.Join(dir, "data"), "-U", "postgres", "-A", "trust", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	port := freePort(t)
	startServer(t, cred, dir, filepath.Join(pgBin, "postgres"), "-D", filepath.Join(dir, "data"),
		"-c", "listen_addresses=127.0.0.1", "-p", strconv.Itoa(port), "-k", dir, "-c", "fsync=off")
	u := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	s := openWhenUp(t, u) // up, but not migrated yet
	_, err = s.Acquire(context.Background(), leasehold.AcquireRequest{Key: "k", Owner: leasehold.NewOwnerID(), TTL: time.Second})
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
	port := freePort(t) // nothing listens there
	for _, u := range []string{
		fmt.Sprintf("redis://127.0.0.1:%d", port),
		fmt.Sprintf("redlock://127.0.0.1:%d", port),
		fmt.Sprintf("postgres://postgres@127.0.0.1:%d/x?sslmode=disable&connect_timeout=2", port),
		fmt.Sprintf("etcd://127.0.0.1:%d?dial_timeout=1s", port),
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
