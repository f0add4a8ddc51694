package harness

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/leasehold-go/leasehold/postgres/pgtest"
)

// Postgres is one PostgreSQL server (fsync off: the harness kills
// processes, not the machine), in the lease-row mode or the advisory-lock
// mode of the postgres store.
type Postgres struct {
	Mode string // "lease" or "advisory"

	bin  string
	dir  string
	port int
	cred *syscall.Credential
	proc *Proc
}

// Name implements Backend.
func (b *Postgres) Name() string { return "postgres-" + b.Mode }

// Start implements Backend.
func (b *Postgres) Start(ctx context.Context, dir string) error {
	bin, err := pgtest.BinDir()
	if err != nil {
		return err
	}
	b.bin, b.dir = bin, filepath.Join(dir, "pg")
	if err := os.MkdirAll(b.dir, 0o700); err != nil {
		return err
	}
	if os.Geteuid() == 0 {
		// PostgreSQL refuses to run as root: run it as postgres, in a
		// folder it owns whose parents it can enter.
		u, err := user.Lookup("postgres")
		if err != nil {
			return fmt.Errorf("running as root needs a postgres user to run the server as: %w; run scripts/install/postgres.sh", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		b.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(b.dir, uid, gid); err != nil {
			return err
		}
		for d := filepath.Dir(b.dir); d != "/" && d != "."; d = filepath.Dir(d) {
			if st, err := os.Stat(d); err == nil && st.Mode().Perm()&0o001 == 0 {
				if err := os.Chmod(d, st.Mode().Perm()|0o011); err != nil {
					return fmt.Errorf("make %s enterable for postgres: %w", d, err)
				}
			}
		}
	}
	initdb, err := StartProc(ProcSpec{Name: "initdb", Cred: b.cred, Log: filepath.Join(b.dir, "initdb.log"),
		Argv: []string{filepath.Join(bin, "initdb"), "-D", filepath.Join(b.dir, "data"), "-U", "postgres", "-A", "trust", "--no-sync"}})
	if err != nil {
		return err
	}
	select {
	case <-initdb.Done():
	case <-time.After(60 * time.Second):
		initdb.Kill()
		return fmt.Errorf("initdb took over 60s: %s", tail(filepath.Join(b.dir, "initdb.log")))
	case <-ctx.Done():
		initdb.Kill()
		return ctx.Err()
	}
	if initdb.err != nil {
		return fmt.Errorf("initdb: %v: %s", initdb.err, tail(filepath.Join(b.dir, "initdb.log")))
	}
	if b.port, err = FreePort(); err != nil {
		return err
	}
	return b.start()
}

func (b *Postgres) start() error {
	log := filepath.Join(b.dir, "pg.log")
	p, err := StartProc(ProcSpec{Name: "postgres", Cred: b.cred, Log: log, Argv: []string{
		filepath.Join(b.bin, "postgres"), "-D", filepath.Join(b.dir, "data"),
		"-c", "listen_addresses=127.0.0.1", "-p", strconv.Itoa(b.port), "-k", b.dir,
		"-c", "fsync=off", "-c", "max_connections=300", "-c", "full_page_writes=off",
	}})
	if err != nil {
		return err
	}
	b.proc = p
	return waitTCP(b.addr(), p, 60*time.Second, log)
}

func (b *Postgres) addr() string { return "127.0.0.1:" + strconv.Itoa(b.port) }

// Endpoints implements Backend.
func (b *Postgres) Endpoints() []string { return []string{b.addr()} }

// URL implements Backend.
func (b *Postgres) URL(eps []string) string {
	return "postgres://postgres@" + eps[0] + "/postgres?sslmode=disable&mode=" + b.Mode + "&connect_timeout=2"
}

// Close implements Backend: SIGINT is PostgreSQL's fast shutdown.
func (b *Postgres) Close() error {
	if b.proc != nil {
		b.proc.Stop(syscall.SIGINT, 10*time.Second)
	}
	return nil
}

// PauseStore implements StorePauser: the postmaster and every backend.
func (b *Postgres) PauseStore() error { return b.proc.Signal(syscall.SIGSTOP) }

// ResumeStore implements StorePauser.
func (b *Postgres) ResumeStore() error { return b.proc.Signal(syscall.SIGCONT) }

// KillStore implements StoreRestarter: SIGKILL of the postmaster and every
// backend; the restart runs crash recovery.
func (b *Postgres) KillStore() error { b.proc.Kill(); return nil }

// RestartStore implements StoreRestarter.
func (b *Postgres) RestartStore(_ context.Context, _ bool) error {
	_ = os.Remove(filepath.Join(b.dir, "data", "postmaster.pid"))
	return b.start()
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
	return LateCleanup{Granted: grantedLeaseReply, Runs: runsStatement, Wait: 3 * time.Second}, true, ""
}

// pgMessages calls f with the type and body of each protocol message in
// chunk (which starts at a message boundary, as the client and the server
// take turns), and stops at the first that does not fit.
func pgMessages(b []byte, f func(typ byte, body []byte)) {
	for len(b) >= 5 {
		n := int(binary.BigEndian.Uint32(b[1:5]))
		if n < 4 || len(b) < 1+n {
			return
		}
		f(b[0], b[5:1+n])
		b = b[1+n:]
	}
}

// grantedLeaseReply reports whether chunk, read from the server, holds the
// answer of a lease-row acquire that granted the key: a DataRow of four
// columns whose first (acquired) is true, in binary or text format. Keys
// whose name is one byte long would look alike in a List reply; the
// harness's keys are longer.
func grantedLeaseReply(b []byte) bool {
	found := false
	pgMessages(b, func(typ byte, msg []byte) {
		if typ == 'D' && len(msg) >= 7 {
			cols := binary.BigEndian.Uint16(msg[:2])
			l := int32(binary.BigEndian.Uint32(msg[2:6]))
			found = found || cols == 4 && l == 1 && (msg[6] == 1 || msg[6] == 't')
		}
	})
	return found
}

// runsStatement reports whether chunk, sent by the client, runs a
// statement: an Execute of the extended protocol or a simple Query.
func runsStatement(b []byte) bool {
	found := false
	pgMessages(b, func(typ byte, _ []byte) { found = found || typ == 'E' || typ == 'Q' })
	return found
}
