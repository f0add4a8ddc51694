package faults

import (
	"context"
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
