package testserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// PostgresPassword is the password of the role "lh_pw", which must log in
// with it over TCP (every other role is trusted), for wrong-password tests.
const PostgresPassword = "s3cret"

// PostgresOptions configure a PostgreSQL cluster. The zero value is a
// cluster in a new folder under the system's temporary folder.
type PostgresOptions struct {
	// Dir is the folder the cluster's own folder is made in; "" means the
	// system's temporary folder. Its parents are made enterable by the
	// server's user when it is not the test process's.
	Dir string
	// Args are more server arguments ("-c", "name=value"), after the
	// defaults, which they override.
	Args []string
	// Env is added to the server's environment.
	Env []string
}

// Postgres is a running throwaway PostgreSQL cluster: made by initdb,
// listening on 127.0.0.1 and on a Unix socket in a short folder of its
// own under the system's temporary folder, with fsync off, run as the postgres user when the tests run as root (PostgreSQL
// refuses root).
type Postgres struct {
	*Process
	Dir  string // the cluster's folder: data/, postgres.log
	Port int
	// SocketDir is the folder of the Unix socket: short, under the
	// system's temporary folder, so that a long Dir cannot push the
	// socket's path past the 107 bytes a Unix socket address holds.
	SocketDir string
	User      *syscall.Credential // the server's user; nil means the test process's
}

// PostgresBinDir returns the folder holding initdb and postgres: BinDir,
// Debian's folders (version 15 first, then the newest), or the folder of
// initdb on PATH.
func PostgresBinDir() (string, error) {
	dirs := []string{BinDir(), "/usr/lib/postgresql/15/bin"}
	dirs = append(dirs, globDesc("/usr/lib/postgresql/*/bin")...)
	if p, err := exec.LookPath("initdb"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	for _, d := range dirs {
		if d != "" && isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", notInstalled("PostgreSQL's initdb and postgres", "postgres.sh", dirs)
}

// StartPostgres makes a cluster with initdb, starts it on a free port, and
// creates the role lh_pw (password PostgresPassword).
func StartPostgres(ctx context.Context, opts PostgresOptions) (*Postgres, error) {
	bin, err := PostgresBinDir()
	if err != nil {
		return nil, err
	}
	pg := &Postgres{}
	if pg.User, err = RunAs("postgres", "postgres.sh"); err != nil {
		return nil, err
	}
	if pg.Dir, err = pg.makeDir(opts.Dir); err != nil {
		return nil, err
	}
	if pg.SocketDir, err = shortDir("lhpg-", pg.User); err == nil {
		err = pg.initdb(ctx, bin)
	}
	if err != nil {
		pg.removeDirs()
		return nil, err
	}
	for range 3 {
		if pg.Port, err = FreePort(); err != nil {
			break
		}
		pg.Process = NewProcess(pg.spec(bin, opts))
		if err = pg.Start(ctx); err == nil || !errors.Is(err, ErrExited) {
			break
		}
	}
	if err == nil {
		err = pgSession(ctx, pg.Addr(), "postgres", "postgres",
			"CREATE ROLE lh_pw LOGIN SUPERUSER PASSWORD '"+PostgresPassword+"'")
	}
	if err != nil {
		if pg.Process != nil {
			pg.Kill()
		}
		pg.removeDirs()
		return nil, err
	}
	return pg, nil
}

// NewPostgres starts a cluster for t (failing t if it cannot) and stops it
// when t ends.
func NewPostgres(t testing.TB, opts PostgresOptions) *Postgres {
	t.Helper()
	pg, err := StartPostgres(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Stop)
	return pg
}

// makeDir makes the cluster's folder in parent, owned by the server's user,
// which must be able to enter it and its parents.
func (pg *Postgres) makeDir(parent string) (string, error) {
	dir, err := os.MkdirTemp(parent, "leasehold-pg-")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil { // mkdtemp makes it 0700
		return "", err
	}
	if pg.User == nil {
		return dir, nil
	}
	if err := chown(dir, pg.User); err != nil {
		return "", err
	}
	for d := filepath.Dir(dir); d != "/" && d != "."; d = filepath.Dir(d) {
		if st, err := os.Stat(d); err == nil && st.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(d, st.Mode().Perm()|0o011); err != nil {
				return "", fmt.Errorf("testserver: make %s enterable for postgres: %w", d, err)
			}
		}
	}
	return dir, nil
}

// initdb makes the cluster: every role trusted except lh_pw over TCP.
func (pg *Postgres) initdb(ctx context.Context, bin string) error {
	data := filepath.Join(pg.Dir, "data")
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres",
		"-A", "trust", "--no-sync", "-E", "UTF8", "--locale=C")
	cmd.SysProcAttr = sysProcAttr(pg.User)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("testserver: initdb: %w\n%s", err, out)
	}
	hba := "local all all trust\n" +
		"host all lh_pw 127.0.0.1/32 scram-sha-256\n" +
		"host all all 127.0.0.1/32 trust\n"
	path := filepath.Join(data, "pg_hba.conf")
	if err := os.WriteFile(path, []byte(hba), 0o600); err != nil {
		return err
	}
	return chown(path, pg.User)
}

func (pg *Postgres) spec(bin string, opts PostgresOptions) Spec {
	return Spec{
		Name: "postgres on port " + strconv.Itoa(pg.Port),
		Path: filepath.Join(bin, "postgres"),
		Args: append([]string{"-D", filepath.Join(pg.Dir, "data"),
			"-c", "listen_addresses=127.0.0.1", "-p", strconv.Itoa(pg.Port), "-k", pg.SocketDir,
			"-c", "fsync=off", "-c", "full_page_writes=off", "-c", "max_connections=300",
			"-c", "shared_buffers=64MB", "-c", "log_min_messages=warning"}, opts.Args...),
		Env:  opts.Env,
		Log:  filepath.Join(pg.Dir, "postgres.log"),
		User: pg.User,
		Probe: func(ctx context.Context) error {
			return pgSession(ctx, pg.Addr(), "postgres", "postgres")
		},
		// SIGINT is the fast shutdown, which does not wait for clients.
		StopSignal: syscall.SIGINT,
		StopGrace:  15 * time.Second,
	}
}

// Addr returns host:port.
func (pg *Postgres) Addr() string { return "127.0.0.1:" + strconv.Itoa(pg.Port) }

// ConnString returns a URL for the postgres superuser over TCP, with extra
// query parameters appended (for example "pool_max_conns=20").
func (pg *Postgres) ConnString(params ...string) string {
	u := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", pg.Port)
	for _, p := range params {
		u += "&" + p
	}
	return u
}

// SocketConnString returns a key=value connection string over the Unix
// socket.
func (pg *Postgres) SocketConnString() string {
	return fmt.Sprintf("host=%s port=%d user=postgres dbname=postgres sslmode=disable", pg.SocketDir, pg.Port)
}

// Kill crashes the server: an immediate shutdown (SIGQUIT), in which the
// postmaster makes every backend quit at once, with no checkpoint and no
// goodbye to clients, so that the next start replays the WAL as after a
// crash. Whatever lingers after 10 s is SIGKILLed, and Kill returns once
// no backend is left to hold the shared memory a new postmaster checks.
func (pg *Postgres) Kill() { pg.Halt(syscall.SIGQUIT, 10*time.Second) }

// Restart crashes the server (Kill) and starts it again on the same data,
// port and socket; crash recovery replays the WAL.
func (pg *Postgres) Restart(ctx context.Context) error {
	pg.Kill()
	return pg.Process.Restart(ctx)
}

// Stop shuts the server down (fast shutdown, SIGKILL after 15 s) and
// removes its folders.
func (pg *Postgres) Stop() {
	pg.Process.Stop()
	pg.removeDirs()
}

func (pg *Postgres) removeDirs() {
	_ = os.RemoveAll(pg.Dir)
	if pg.SocketDir != "" {
		_ = os.RemoveAll(pg.SocketDir)
	}
}

// shortDir makes a folder for a server's Unix socket under the system's
// temporary folder, or /tmp when that one's path is long, owned by user
// (nil: the test process's) and enterable by everyone: a socket's path
// must fit in the 107 bytes of a Unix socket address, which a folder
// deep in a test's or a fault run's tree can pass.
func shortDir(prefix string, user *syscall.Credential) (string, error) {
	parent := os.TempDir()
	if len(parent) > 40 {
		parent = "/tmp"
	}
	dir, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return "", err
	}
	if err = os.Chmod(dir, 0o755); err == nil {
		err = chown(dir, user)
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}
