package testserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Bouncer is a running PgBouncer in front of a Postgres, in transaction
// pooling mode, trusting every client.
type Bouncer struct {
	*Process
	Port int
	Dir  string // its configuration and logs, inside the cluster's folder
}

// StartBouncer starts PgBouncer in transaction pooling mode in front of pg.
func StartBouncer(ctx context.Context, pg *Postgres) (*Bouncer, error) {
	bin, err := FindBin("pgbouncer", "postgres.sh", "/usr/sbin")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(pg.Dir, "bouncer-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	if err := chown(dir, pg.User); err != nil { // it writes its log there
		return nil, err
	}
	users := filepath.Join(dir, "users.txt")
	if err := os.WriteFile(users, []byte(`"postgres" ""`+"\n"), 0o644); err != nil {
		return nil, err
	}
	for range 3 {
		b := &Bouncer{Dir: dir}
		if b.Port, err = FreePort(); err != nil {
			return nil, err
		}
		ini := filepath.Join(dir, "pgbouncer.ini")
		if err := os.WriteFile(ini, []byte(bouncerINI(pg.Port, b.Port, dir)), 0o644); err != nil {
			return nil, err
		}
		b.Process = NewProcess(Spec{
			Name: "pgbouncer on port " + strconv.Itoa(b.Port),
			Path: bin,
			Args: []string{ini},
			Log:  filepath.Join(dir, "stderr.log"),
			Logs: []string{filepath.Join(dir, "pgbouncer.log")},
			User: pg.User,
			Probe: func(ctx context.Context) error {
				return pgSession(ctx, b.Addr(), "postgres", "postgres")
			},
			StartTimeout: 20 * time.Second,
			StopSignal:   syscall.SIGINT,
		})
		if err = b.Start(ctx); err == nil {
			return b, nil
		}
		if !errors.Is(err, ErrExited) {
			break
		}
	}
	return nil, err
}

// bouncerINI is PgBouncer's configuration: every database of the server
// on serverPort, transaction pooling, extra_float_digits (which pgx sends)
// ignored.
func bouncerINI(serverPort, port int, dir string) string {
	return fmt.Sprintf(`[databases]
* = host=127.0.0.1 port=%d
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
max_client_conn = 1000
default_pool_size = 20
ignore_startup_parameters = extra_float_digits
logfile = %s
`, serverPort, port, filepath.Join(dir, "users.txt"), filepath.Join(dir, "pgbouncer.log"))
}

// NewBouncer starts PgBouncer in front of pg for t (failing t if it
// cannot) and stops it when t ends.
func NewBouncer(t testing.TB, pg *Postgres) *Bouncer {
	t.Helper()
	b, err := StartBouncer(t.Context(), pg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Stop)
	return b
}

// Addr returns host:port.
func (b *Bouncer) Addr() string { return "127.0.0.1:" + strconv.Itoa(b.Port) }

// ConnString returns a URL through PgBouncer, with extra query parameters
// appended. PgBouncer 1.18 in transaction mode does not keep named
// prepared statements, so it asks pgx for unnamed statements with cached
// descriptions (one round trip).
func (b *Bouncer) ConnString(params ...string) string {
	u := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&default_query_exec_mode=cache_describe", b.Port)
	for _, p := range params {
		u += "&" + p
	}
	return u
}
