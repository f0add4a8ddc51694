// Package redistest starts real redis-server processes for tests and
// benchmarks: on free loopback ports, with data in a temporary folder, no
// persistence, each in its own process group so that it can be killed with
// everything it started.
package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// InstallHint says how to get the server binary.
const InstallHint = "redis-server not found on PATH or in $LEASEHOLD_BIN (default ~/.cache/leasehold/bin); run scripts/install/redis.sh"

// Bin finds redis-server: in $LEASEHOLD_BIN (default
// ~/.cache/leasehold/bin), then on PATH.
func Bin() (string, error) {
	dir := os.Getenv("LEASEHOLD_BIN")
	if dir == "" {
		if home, err := os.UserHomeDir(); err == nil {
			dir = filepath.Join(home, ".cache", "leasehold", "bin")
		}
	}
	if dir != "" {
		p := filepath.Join(dir, "redis-server")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p, nil
	}
	return "", errors.New(InstallHint)
}

// Server is one redis-server process.
type Server struct {
	Port int
	Dir  string
	args []string
	bin  string

	mu  sync.Mutex
	pid int // 0 when not running
}

// Addr returns host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.Port) }

// URL returns redis://host:port/0.
func (s *Server) URL() string { return "redis://" + s.Addr() + "/0" }

// Start starts a server on a free loopback port with its files in a new
// folder under dir. extra are more "--option value" arguments.
func Start(dir string, extra ...string) (*Server, error) {
	bin, err := Bin()
	if err != nil {
		return nil, err
	}
	d, err := os.MkdirTemp(dir, "redis-")
	if err != nil {
		return nil, err
	}
	var last error
	for range 5 {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s := &Server{Port: port, Dir: d, bin: bin, args: extra}
		if last = s.start(); last == nil {
			return s, nil
		}
	}
	return nil, last
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) start() error {
	args := []string{
		"--bind", "127.0.0.1", "--port", strconv.Itoa(s.Port), "--dir", s.Dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no",
		"--logfile", filepath.Join(s.Dir, "redis.log"),
	}
	args = append(args, s.args...)
	cmd := exec.Command(s.bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// The server writes to its log file; its standard files are /dev/null,
	// handed over directly so that os/exec starts no copying goroutines.
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, devnull, devnull
	err = cmd.Start()
	_ = devnull.Close()
	if err != nil {
		return fmt.Errorf("start %s: %w", s.bin, err)
	}
	// The process is reaped with wait4 (see exited and Kill) rather than a
	// goroutine blocked in cmd.Wait, so that tests' goroutine-leak checks
	// see nothing of it.
	pid := cmd.Process.Pid
	_ = cmd.Process.Release()
	s.mu.Lock()
	s.pid = pid
	s.mu.Unlock()

	deadline := time.Now().Add(10 * time.Second)
	for {
		if ping(s.Addr()) == nil {
			return nil
		}
		if s.exited() {
			return fmt.Errorf("redis-server on port %d exited at start: %s", s.Port, s.logTail())
		}
		if time.Now().After(deadline) {
			s.Kill()
			return fmt.Errorf("redis-server on port %d not ready after 10s: %s", s.Port, s.logTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "redis.log"))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, " | ")
}

// ping sends PING and expects +PONG (or NOAUTH).
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	// A server with a password answers NOAUTH: it is up all the same.
	if !strings.HasPrefix(line, "+PONG") && !strings.HasPrefix(line, "-NOAUTH") {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	return nil
}

// Command sends one command and returns its reply formatted as text: a
// bulk or simple string as is ("OK" is "+OK"), an integer as ":n", an
// error as "-ERR ...", an array as its elements' texts in brackets.
func (s *Server) Command(args ...string) (string, error) {
	r, err := s.Do(args...)
	if err != nil {
		return "", err
	}
	return format(r), nil
}

func format(r any) string {
	switch v := r.(type) {
	case nil:
		return "(nil)"
	case int64:
		return ":" + strconv.FormatInt(v, 10)
	case status:
		return "+" + string(v)
	case error:
		return "-" + v.Error()
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = format(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprint(r)
}

type status string

// Do sends one command and returns its reply: string (bulk), status
// (simple string), int64, nil, []any, or a Redis error reply as an error
// value (not as Do's error, which is for failures to talk).
func (s *Server) Do(args ...string) (any, error) {
	c, err := net.DialTimeout("tcp", s.Addr(), time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return nil, err
	}
	return readReply(bufio.NewReader(c))
}

func readReply(r *bufio.Reader) (any, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return nil, errors.New("empty reply line")
	}
	body := line[1:]
	switch line[0] {
	case '+':
		return status(body), nil
	case '-':
		return errors.New(body), nil
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = readReply(r); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown reply %q", line)
}

// exited reports (and reaps) a server that has exited.
func (s *Server) exited() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pid == 0 {
		return true
	}
	var ws syscall.WaitStatus
	if p, err := syscall.Wait4(s.pid, &ws, syscall.WNOHANG, nil); p == s.pid || err != nil {
		s.pid = 0
		return true
	}
	return false
}

// Kill kills the server (SIGKILL to its process group) and waits for it.
// Without persistence, everything it held is gone.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pid == 0 {
		return
	}
	_ = syscall.Kill(-s.pid, syscall.SIGKILL)
	var ws syscall.WaitStatus
	for {
		if _, err := syscall.Wait4(s.pid, &ws, 0, nil); err != syscall.EINTR {
			break
		}
	}
	s.pid = 0
}

// Pause stops the server with SIGSTOP; Resume continues it.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a paused server.
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pid != 0 {
		_ = syscall.Kill(-s.pid, sig)
	}
}

// Restart kills the server and starts a new one on the same port and
// folder, without the old one's data.
func (s *Server) Restart() error {
	s.Kill()
	var err error
	for range 50 {
		if err = s.start(); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond) // the port may linger for a moment
	}
	return err
}

// Running reports whether the process is alive.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pid != 0
}

// Stop kills the server and removes its folder.
func (s *Server) Stop() {
	s.Kill()
	_ = os.RemoveAll(s.Dir)
}
