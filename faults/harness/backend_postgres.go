package harness

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/leasehold-go/leasehold/internal/testserver"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/proxy/pgwire"
)

// Postgres is one PostgreSQL server (fsync off: the harness kills
// processes, not the machine), in the lease-row mode or the advisory-lock
// mode of the postgres store.
type Postgres struct {
	Mode string // "lease" or "advisory"

	pg *testserver.Postgres
}

// Name implements Backend.
func (b *Postgres) Name() string { return "postgres-" + b.Mode }

// Start implements Backend.
func (b *Postgres) Start(ctx context.Context, dir string) error {
	var err error
	b.pg, err = testserver.StartPostgres(ctx, testserver.PostgresOptions{Dir: dir})
	return err
}

// Endpoints implements Backend.
func (b *Postgres) Endpoints() []string { return []string{b.pg.Addr()} }

// leasePoolConns is the holders' pool size in the lease-row mode. pgx's
// default (the larger of 4 and the CPUs) is smaller than a holder's
// goroutines (one per key, the renewer, the clean-ups): under the late
// clean-up (F5c) every pooled connection then waited behind a held
// statement, and the retry that must win the key first waited for a
// connection until the held clean-up had gone through.
const leasePoolConns = 32

// URL implements Backend.
func (b *Postgres) URL(eps []string) string {
	u := "postgres://postgres@" + eps[0] + "/postgres?sslmode=disable&mode=" + b.Mode + "&connect_timeout=2"
	if b.Mode == "lease" {
		u += "&pool_max_conns=" + strconv.Itoa(leasePoolConns)
	}
	return u
}

// Close implements Backend: PostgreSQL's fast shutdown (SIGINT).
func (b *Postgres) Close() error {
	if b.pg != nil {
		b.pg.Process.Stop()
	}
	return nil
}

// PauseStore implements StorePauser: the postmaster and every backend.
func (b *Postgres) PauseStore() error { return b.pg.Pause() }

// ResumeStore implements StorePauser.
func (b *Postgres) ResumeStore() error { return b.pg.Resume() }

// KillStore implements StoreRestarter: SIGKILL of the postmaster and every
// backend; the restart runs crash recovery.
func (b *Postgres) KillStore() error { b.pg.Process.Kill(); return nil }

// RestartStore implements StoreRestarter: on the same data and port.
func (b *Postgres) RestartStore(ctx context.Context, _ bool) error {
	_ = os.Remove(filepath.Join(b.pg.Dir, "data", "postmaster.pid"))
	return b.pg.Process.Restart(ctx)
}

// LossFaults implements GrantLoser: an advisory lock ends with its
// session (postgres/doc.go), so a server restart (F9), a connection reset
// (F7) or a statement that fails on the network (a reply later than the
// TTL, F4; dropped, F5; a partition, F6: the client discards the
// statement's session) frees the key while its holder still believes it
// holds it. The lease-row mode keeps its leases in a table: none.
func (b *Postgres) LossFaults() []string {
	if b.Mode == "advisory" {
		return []string{check.F4, check.F5, check.F6, check.F7, check.F9}
	}
	return nil
}

// LateCleanup implements LateCleanupStore. In the lease-row mode an acquire
// whose reply is lost sends a clean-up statement on another pooled
// connection; the advisory mode's clean-up is the end of the lost acquire's
// own session, which cannot touch another session's lock. The clean-up
// waits 1 s for its answer; the store's URL pool then sends the server a
// cancel request and gives the statement 2 s more before it drops the
// connection.
func (b *Postgres) LateCleanup() (LateCleanup, bool, string) {
	if b.Mode != "lease" {
		return LateCleanup{}, false, "the advisory mode's clean-up ends the lost acquire's own session, which cannot touch a lock held by another session: no clean-up statement to delay"
	}
	return LateCleanup{Granted: pgwire.GrantedLeaseReply, Runs: pgwire.RunsStatement, Wait: 3 * time.Second, SameKey: pgwire.SameKey}, true, ""
}
