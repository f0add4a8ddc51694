// Package pgtest starts throwaway PostgreSQL servers (and PgBouncer) for
// tests and benchmarks (the postgres store's, the fence package's SQL tests,
// and yours): a fresh cluster in a temporary
// folder, on a free loopback port and a Unix socket in that folder, run as
// the postgres user when the tests run as root, stopped afterwards. When a
// binary is missing, Start fails with a message naming the install script.
package pgtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

const installHint = "run scripts/install/postgres.sh (it installs PostgreSQL and PgBouncer from Debian's packages)"

// Server is a running throwaway PostgreSQL cluster.
type Server struct {
	Dir  string // the temporary folder: data/, the Unix socket, logs
	Port int    // TCP port on 127.0.0.1

	bin  string
	cred *syscall.Credential
	mu   sync.Mutex
	cmd  *exec.Cmd
}

// Password is the password of the role "lh_pw", which must log in with it
// over TCP (every other role is trusted), for wrong-password tests.
const Password = "s3cret"

// BinDir returns the folder holding the PostgreSQL server binaries (initdb
// and postgres): $LEASEHOLD_BIN, ~/.cache/leasehold/bin, the Debian
// folders (newest version first) or the folder of initdb on PATH. The error
// names the folders tried and the install script.
func BinDir() (string, error) {
	var dirs []string
	if d := os.Getenv("LEASEHOLD_BIN"); d != "" {
		dirs = append(dirs, d)
	}
	if h, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(h, ".cache", "leasehold", "bin"))
	}
	dirs = append(dirs, "/usr/lib/postgresql/15/bin")
	more, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Sort(sort.Reverse(sort.StringSlice(more)))
	dirs = append(dirs, more...)
	if p, err := exec.LookPath("initdb"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", fmt.Errorf("pgtest: PostgreSQL server binaries (initdb, postgres) not found in %s; %s", strings.Join(dirs, ", "), installHint)
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// credential returns the postgres user's credential when running as root
// (PostgreSQL refuses to run as root), or nil.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root needs a postgres user to run the server as: %w; %s", err, installHint)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}

// FreePort returns a free TCP port on 127.0.0.1.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start creates and starts a cluster. Stop it with Stop.
func Start() (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "leasehold-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, bin: bin, cred: cred}
	ok := false
	defer func() {
		if !ok {
			s.Stop()
		}
	}()
	// mkdtemp makes the folder 0700: the server's user must enter it.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, err
		}
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"), "-U", "postgres",
		"-A", "trust", "--no-sync", "-E", "UTF8", "--locale=C")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	hba := "local all all trust\n" +
		"host all lh_pw 127.0.0.1/32 scram-sha-256\n" +
		"host all all 127.0.0.1/32 trust\n"
	hbaPath := filepath.Join(dir, "data", "pg_hba.conf")
	if err := os.WriteFile(hbaPath, []byte(hba), 0o600); err != nil {
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(hbaPath, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, err
		}
	}
	if s.Port, err = FreePort(); err != nil {
		return nil, err
	}
	if err := s.start(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.ConnString())
	if err != nil {
		return nil, err
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE ROLE lh_pw LOGIN SUPERUSER PASSWORD '"+Password+"'"); err != nil {
		return nil, fmt.Errorf("pgtest: create role: %w", err)
	}
	ok = true
	return s, nil
}

// start runs the postmaster on the existing data folder and waits until it
// accepts connections.
func (s *Server) start() error {
	logf, err := os.OpenFile(filepath.Join(s.Dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), "-D", filepath.Join(s.Dir, "data"),
		"-c", "listen_addresses=127.0.0.1", "-p", strconv.Itoa(s.Port), "-k", s.Dir,
		"-c", "fsync=off", "-c", "full_page_writes=off", "-c", "max_connections=300",
		"-c", "shared_buffers=64MB", "-c", "log_min_messages=warning")
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group, so that a crash test can kill every backend at
	// once; and killed if the test process dies without stopping it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	s.mu.Lock()
	s.cmd = cmd
	s.mu.Unlock()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := pgx.Connect(ctx, s.ConnString())
		if err == nil {
			_ = c.Close(ctx)
			cancel()
			return nil
		}
		cancel()
		if exited(cmd) {
			s.Kill()
			return fmt.Errorf("pgtest: postgres exited at start; log:\n%s", s.Log())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgtest: postgres not ready after 30s: %v; log:\n%s", err, s.Log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Log returns the server's log.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "postgres.log"))
	return string(b)
}

// ConnString returns a URL for the postgres superuser over TCP, with extra
// query parameters appended (for example "pool_max_conns=20").
func (s *Server) ConnString(params ...string) string {
	u := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.Port)
	for _, p := range params {
		u += "&" + p
	}
	return u
}

// SocketConnString returns a key=value connection string over the Unix socket.
func (s *Server) SocketConnString() string {
	return fmt.Sprintf("host=%s port=%d user=postgres dbname=postgres sslmode=disable", s.Dir, s.Port)
}

// exited reports whether cmd's process has exited (a zombie not yet waited
// for counts). It does not reap it, so that no goroutine has to wait for the
// server in the background (goleak would see it).
func exited(cmd *exec.Cmd) bool { return !alive(cmd.Process.Pid) }

// stopCmd signals cmd's process (sig), waits up to grace for it to exit,
// then kills its whole process group and reaps it.
func stopCmd(cmd *exec.Cmd, sig syscall.Signal, grace time.Duration) {
	_ = cmd.Process.Signal(sig)
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(grace):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	// Anything left in the group (a backend that outlived its postmaster).
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// Kill crashes the server: an immediate shutdown (SIGQUIT), in which the
// postmaster makes every backend quit at once, with no checkpoint and no
// goodbye to clients, so the next start replays the WAL as after a crash.
// (SIGKILL to the postmaster alone would orphan the backends, which outlive
// it briefly and end as zombies nobody reaps.) If anything lingers after a
// grace period, the postmaster and its children are SIGKILLed.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	kids := children(cmd.Process.Pid)
	stopCmd(cmd, syscall.SIGQUIT, 10*time.Second)
	for _, pid := range kids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	// Wait until every backend is gone (or a zombie, which holds no shared
	// memory) before a new postmaster checks for them.
	for _, pid := range kids {
		for i := 0; i < 500 && alive(pid); i++ {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// children returns the pids whose parent is pid.
func children(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	var kids []int
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			kids = append(kids, n)
		}
	}
	return kids
}

// alive reports whether pid runs (is neither gone nor a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}

// Restart crashes the server (Kill) and starts it again on the same data,
// port and socket. Crash recovery replays the WAL.
func (s *Server) Restart() error {
	s.Kill()
	return s.start()
}

// Stop shuts the server down (SIGINT: fast shutdown, which does not wait for
// clients), kills the group if it lingers, and removes the folder.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if cmd != nil {
		stopCmd(cmd, syscall.SIGINT, 15*time.Second)
	}
	if s.Dir != "" {
		_ = os.RemoveAll(s.Dir)
	}
}

// Bouncer is a running PgBouncer in front of a Server.
type Bouncer struct {
	Port int
	dir  string
	cmd  *exec.Cmd
}

// StartBouncer starts PgBouncer in transaction pooling mode in front of s.
func StartBouncer(s *Server) (*Bouncer, error) {
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		if isExec("/usr/sbin/pgbouncer") {
			bin = "/usr/sbin/pgbouncer"
		} else {
			return nil, fmt.Errorf("pgtest: pgbouncer not found: %s", installHint)
		}
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(s.Dir, "bouncer")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	b := &Bouncer{Port: port, dir: dir}
	ini := fmt.Sprintf(`[databases]
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
`, s.Port, port, filepath.Join(dir, "users.txt"), filepath.Join(dir, "pgbouncer.log"))
	if err := os.WriteFile(filepath.Join(dir, "pgbouncer.ini"), []byte(ini), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "users.txt"), []byte(`"postgres" ""`+"\n"), 0o644); err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(bin, filepath.Join(dir, "pgbouncer.ini"))
	out, err := os.Create(filepath.Join(dir, "stderr.log"))
	if err != nil {
		return nil, err
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("pgtest: start pgbouncer: %w", err)
	}
	b.cmd = cmd
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := pgx.Connect(ctx, b.ConnString())
		if err == nil {
			_ = c.Close(ctx)
			cancel()
			return b, nil
		}
		cancel()
		if exited(cmd) {
			b.Stop()
			return nil, fmt.Errorf("pgtest: pgbouncer exited at start: %s", b.log())
		}
		if time.Now().After(deadline) {
			b.Stop()
			return nil, fmt.Errorf("pgtest: pgbouncer not ready: %v: %s", err, b.log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (b *Bouncer) log() string {
	x, _ := os.ReadFile(filepath.Join(b.dir, "stderr.log"))
	y, _ := os.ReadFile(filepath.Join(b.dir, "pgbouncer.log"))
	return string(x) + string(y)
}

// ConnString returns a URL through PgBouncer. PgBouncer 1.18 in transaction
// mode does not keep named prepared statements, so it asks pgx for
// unnamed statements with cached descriptions (one round trip).
func (b *Bouncer) ConnString(params ...string) string {
	u := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&default_query_exec_mode=cache_describe", b.Port)
	for _, p := range params {
		u += "&" + p
	}
	return u
}

// Stop stops PgBouncer.
func (b *Bouncer) Stop() {
	if b.cmd != nil {
		stopCmd(b.cmd, syscall.SIGINT, 10*time.Second)
		b.cmd = nil
	}
}
