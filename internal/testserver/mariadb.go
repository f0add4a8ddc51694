package testserver

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
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
)

// MariaDBOptions configure a MariaDB server. The zero value is a server
// with no database but the system's, in a new folder under the system's
// temporary folder.
type MariaDBOptions struct {
	// Database is created at start if not "".
	Database string
	// Dir is the folder the server's own folder is made in; "" means the
	// system's temporary folder.
	Dir string
	// Args are more server arguments, after the defaults.
	Args []string
}

// MariaDB is a running throwaway MariaDB server (10.4 or later) on
// 127.0.0.1, whose root user has no password.
type MariaDB struct {
	*Process
	Port     int
	Dir      string // its folder: data/, error.log
	Database string
	// sockDir holds the Unix socket: a short folder of its own (see
	// shortDir), so that a long Dir cannot stop the server.
	sockDir string
}

// StartMariaDB makes a data folder with mariadb-install-db, starts mariadbd
// on a free port and waits until it greets clients.
func StartMariaDB(ctx context.Context, opts MariaDBOptions) (*MariaDB, error) {
	server, err := FindBin("mariadbd", "mariadb.sh", "/usr/sbin")
	if err != nil {
		return nil, err
	}
	install, err := FindBin("mariadb-install-db", "mariadb.sh")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(opts.Dir, "leasehold-mariadb-")
	if err != nil {
		return nil, err
	}
	m := &MariaDB{Dir: dir, Database: opts.Database}
	if m.sockDir, err = shortDir("lhmy-", nil); err == nil {
		err = m.install(ctx, install)
	}
	if err == nil {
		for range 3 {
			if m.Port, err = FreePort(); err != nil {
				break
			}
			m.Process = NewProcess(m.spec(server, opts))
			if err = m.Start(ctx); err == nil {
				return m, nil
			}
			if !errors.Is(err, ErrExited) {
				break
			}
		}
	}
	m.removeDirs()
	return nil, err
}

// NewMariaDB starts a server for t (failing t if it cannot) and stops it
// when t ends.
func NewMariaDB(t testing.TB, opts MariaDBOptions) *MariaDB {
	t.Helper()
	m, err := StartMariaDB(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	return m
}

// userArgs says which user mariadbd runs as: it refuses root unless told.
func userArgs() []string {
	if os.Geteuid() == 0 {
		return []string{"--user=root"}
	}
	if u, err := user.Current(); err == nil {
		return []string{"--user=" + u.Username}
	}
	return nil
}

// install makes the data folder, and the file that creates the database
// at start.
func (m *MariaDB) install(ctx context.Context, bin string) error {
	args := append([]string{"--no-defaults", "--datadir=" + filepath.Join(m.Dir, "data"),
		"--auth-root-authentication-method=normal", "--skip-test-db"}, userArgs()...)
	if out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("testserver: %s: %w\n%s", bin, err, out)
	}
	init := ""
	if m.Database != "" {
		init = "CREATE DATABASE IF NOT EXISTS `" + m.Database + "`;\n"
	}
	return os.WriteFile(filepath.Join(m.Dir, "init.sql"), []byte(init), 0o644)
}

func (m *MariaDB) spec(bin string, opts MariaDBOptions) Spec {
	args := append([]string{"--no-defaults", "--datadir=" + filepath.Join(m.Dir, "data"),
		"--socket=" + filepath.Join(m.sockDir, "sock"), "--port=" + strconv.Itoa(m.Port),
		"--bind-address=127.0.0.1", "--skip-name-resolve", "--innodb-buffer-pool-size=64M",
		"--log-error=" + filepath.Join(m.Dir, "error.log"), "--pid-file=" + filepath.Join(m.Dir, "pid"),
		"--init-file=" + filepath.Join(m.Dir, "init.sql")}, userArgs()...)
	return Spec{
		Name:         "mariadbd on port " + strconv.Itoa(m.Port),
		Path:         bin,
		Args:         append(args, opts.Args...),
		Log:          filepath.Join(m.Dir, "stdout.log"),
		Logs:         []string{filepath.Join(m.Dir, "error.log")},
		Probe:        func(ctx context.Context) error { return mysqlGreeting(ctx, m.Addr()) },
		StartTimeout: 60 * time.Second,
		StopSignal:   syscall.SIGTERM,
		StopGrace:    20 * time.Second,
	}
}

// mysqlGreeting reads the server's first packet: a handshake (protocol
// version 10) once it accepts clients, which it does after running its
// init file.
func mysqlGreeting(ctx context.Context, addr string) error {
	d := net.Dialer{Timeout: time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return err
	}
	n := int(binary.LittleEndian.Uint32(append(hdr[:3:3], 0)))
	body := make([]byte, min(n, 512))
	if _, err := io.ReadFull(c, body); err != nil {
		return err
	}
	switch {
	case len(body) > 0 && body[0] == 10:
		return nil
	case len(body) > 3 && body[0] == 0xff:
		return fmt.Errorf("testserver: MariaDB refused: %s", strings.TrimSpace(string(body[3:])))
	}
	return fmt.Errorf("testserver: unexpected MariaDB greeting % x", body)
}

// Addr returns host:port.
func (m *MariaDB) Addr() string { return "127.0.0.1:" + strconv.Itoa(m.Port) }

// DSN returns a data source name (go-sql-driver/mysql's format) for root
// on the database of the options, with params ("clientFoundRows=true")
// appended.
func (m *MariaDB) DSN(params ...string) string {
	dsn := fmt.Sprintf("root@tcp(%s)/%s", m.Addr(), m.Database)
	if len(params) > 0 {
		dsn += "?" + strings.Join(params, "&")
	}
	return dsn
}

// Stop shuts the server down (SIGTERM, SIGKILL after 20 s) and removes its
// folders.
func (m *MariaDB) Stop() {
	m.Process.Stop()
	m.removeDirs()
}

func (m *MariaDB) removeDirs() {
	_ = os.RemoveAll(m.Dir)
	if m.sockDir != "" {
		_ = os.RemoveAll(m.sockDir)
	}
}
