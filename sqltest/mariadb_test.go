package sqltest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/leasehold-go/leasehold/fence"
	"github.com/leasehold-go/leasehold/postgres/pgtest"
)

// mariaDB is a throwaway MariaDB server: its own data folder under the
// system's temporary folder, listening on a free loopback port, stopped
// and removed by stop. The MySQL dialect of the SQL helpers is tested on
// it (scripts/install/mariadb.sh installs the server).
type mariaDB struct {
	dir  string
	port int
	cmd  *exec.Cmd
	done chan struct{}
}

const mariaInstallHint = "run scripts/install/mariadb.sh (apt-get install mariadb-server)"

// lookBin returns the first of names found on PATH or as a path.
func lookBin(names ...string) (string, error) {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("none of %s found: %s", strings.Join(names, ", "), mariaInstallHint)
}

func startMariaDB() (_ *mariaDB, err error) {
	// MariaDB 10.4 or later: the options below are MariaDB's, and Oracle
	// MySQL has no install-db tool.
	server, err := lookBin("mariadbd", "/usr/sbin/mariadbd")
	if err != nil {
		return nil, err
	}
	install, err := lookBin("mariadb-install-db")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "leasehold-mariadb-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dir)
		}
	}()
	// mariadbd refuses to run as root unless told which user to be.
	var asUser []string
	if os.Geteuid() == 0 {
		asUser = []string{"--user=root"}
	} else if u, err := user.Current(); err == nil {
		asUser = []string{"--user=" + u.Username}
	}
	data := filepath.Join(dir, "data")
	initArgs := append([]string{"--no-defaults", "--datadir=" + data, "--auth-root-authentication-method=normal", "--skip-test-db"}, asUser...)
	if out, err := exec.Command(install, initArgs...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s: %v\n%s", install, err, out)
	}
	port, err := pgtest.FreePort()
	if err != nil {
		return nil, err
	}
	logFile := filepath.Join(dir, "error.log")
	args := append([]string{"--no-defaults", "--datadir=" + data, "--socket=" + filepath.Join(dir, "sock"),
		"--port=" + strconv.Itoa(port), "--bind-address=127.0.0.1", "--skip-name-resolve",
		"--innodb-buffer-pool-size=64M", "--log-error=" + logFile, "--pid-file=" + filepath.Join(dir, "pid")}, asUser...)
	cmd := exec.Command(server, args...)
	// Its own process group, and killed with the test binary if that dies
	// before TestMain can stop it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %v", server, err)
	}
	m := &mariaDB{dir: dir, port: port, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(m.done)
	}()
	if err := m.waitReady(60 * time.Second); err != nil {
		log, _ := os.ReadFile(logFile) // before stop removes it
		m.stop()
		return nil, fmt.Errorf("mariadb on 127.0.0.1:%d: %v\n%s", port, err, tailLines(string(log), 20))
	}
	return m, nil
}

// waitReady pings the server until it answers, then creates the test
// database.
func (m *mariaDB) waitReady(limit time.Duration) error {
	db, err := sql.Open("mysql", fmt.Sprintf("root@tcp(127.0.0.1:%d)/", m.port))
	if err != nil {
		return err
	}
	defer db.Close()
	end := time.Now().Add(limit)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = db.PingContext(ctx)
		cancel()
		if err == nil {
			break
		}
		select {
		case <-m.done:
			return errors.New("the server exited at start")
		default:
		}
		if time.Now().After(end) {
			return fmt.Errorf("not ready after %s: %v", limit, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, err = db.Exec("CREATE DATABASE leasehold_test")
	return err
}

// DSN is the test database's data source name. clientFoundRows makes an
// UPDATE report the rows it matched, as fence.Table needs.
func (m *mariaDB) DSN() string {
	return fmt.Sprintf("root@tcp(127.0.0.1:%d)/leasehold_test?clientFoundRows=true", m.port)
}

// stop shuts the server down (SIGTERM, then SIGKILL to its process group
// after 20 s) and removes its folder.
func (m *mariaDB) stop() {
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.done:
	case <-time.After(20 * time.Second):
		_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
		<-m.done
	}
	_ = os.RemoveAll(m.dir)
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// openMariaDB opens the shared test server's database.
func openMariaDB(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", mariaDBServer(t).DSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestMariaDB(t *testing.T) {
	runScenarios(t, openMariaDB(t), fence.MySQL, fenceScenarios)
}

func TestDedupeMariaDB(t *testing.T) {
	runScenarios(t, openMariaDB(t), fence.MySQL, dedupeScenarios)
}

// Without clientFoundRows, MySQL reports an UPDATE that left the fence at
// the same token as changing no row. The same holder writing again is then
// refused, with an error that says how to fix the DSN rather than calling
// the token stale.
func TestMariaDBWithoutClientFoundRows(t *testing.T) {
	dsn := strings.Replace(mariaDBServer(t).DSN(), "clientFoundRows=true", "clientFoundRows=false", 1)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tbl := accountsTable(t, db, fence.MySQL)
	ctx := context.Background()
	if err := tbl.Check(ctx, db, int64(1), 5); err != nil {
		t.Fatal(err)
	}
	err = tbl.Check(ctx, db, int64(1), 5)
	if err == nil || errors.Is(err, fence.ErrStale) || !strings.Contains(err.Error(), "clientFoundRows=true") {
		t.Fatalf("the same token again without clientFoundRows: got %v, want an error naming clientFoundRows", err)
	}
	wantStale(t, tbl.Check(ctx, db, int64(1), 4), 4, 5)
}
