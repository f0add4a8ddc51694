// Package pgtest starts a throwaway PostgreSQL server for tests: a fresh
// data folder in a temporary directory, a free loopback port, fsync off,
// and the server in its own process group so that it can always be stopped.
package pgtest

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
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// installHint names the script that installs the server.
const installHint = "run scripts/install/postgres.sh from the repository root"

// Server is a running PostgreSQL server.
type Server struct {
	// URL is a connection URL for the database "postgres" as the
	// superuser "postgres" (trust authentication).
	URL  string
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
	log  string
}

// Start initialises a data folder and starts a server, ready to accept
// connections. It fails (with an installation hint) if the server binaries
// are missing.
func Start(ctx context.Context) (*Server, error) {
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "fence-pgtest-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, log: filepath.Join(dir, "postgres.log")}
	ok := false
	defer func() {
		if !ok {
			s.Stop()
		}
	}()

	var cred *syscall.Credential
	if os.Geteuid() == 0 { // PostgreSQL refuses to run as root
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("pgtest: running as root needs a postgres user: %w (%s)", err, installHint)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chmod(dir, 0o755); err != nil {
			return nil, err
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8")
	initdb.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}

	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(s.log)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	s.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port), "-k", dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "max_connections=50")
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("pgtest: starting postgres: %w", err)
	}
	s.done = make(chan struct{})
	go func() {
		s.cmd.Wait()
		close(s.done)
	}()

	s.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		conn, err := pgx.Connect(cctx, s.URL)
		cancel()
		if err == nil {
			conn.Close(ctx)
			break
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("pgtest: postgres exited: %s", s.tail())
		default:
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("pgtest: postgres not ready: %v; log: %s", err, s.tail())
		}
		time.Sleep(50 * time.Millisecond)
	}
	ok = true
	return s, nil
}

// Stop stops the server (fast shutdown, then SIGKILL to its process group
// after a grace period) and removes its files. It is safe to call more than
// once and on a partly started server.
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil && s.done != nil {
		pgid := s.cmd.Process.Pid
		syscall.Kill(-pgid, syscall.SIGINT) // fast shutdown: does not wait for clients
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-pgid, syscall.SIGKILL)
			<-s.done
		}
		// Children that outlived the postmaster, if any.
		syscall.Kill(-pgid, syscall.SIGKILL)
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

func (s *Server) tail() string {
	b, _ := os.ReadFile(s.log)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// findBin finds the folder holding initdb and postgres.
func findBin() (string, error) {
	if dir := os.Getenv("LEASEHOLD_PG_BIN"); dir != "" {
		return dir, nil
	}
	candidates, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for i := len(candidates) - 1; i >= 0; i-- {
		if isExec(filepath.Join(candidates[i], "initdb")) && isExec(filepath.Join(candidates[i], "postgres")) {
			return candidates[i], nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		dir := filepath.Dir(p)
		if isExec(filepath.Join(dir, "postgres")) {
			return dir, nil
		}
	}
	return "", errors.New("pgtest: PostgreSQL server binaries (initdb, postgres) not found in /usr/lib/postgresql/*/bin, on PATH or in LEASEHOLD_PG_BIN: " + installHint)
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
