package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var built once[string]

// leaseholdBin returns the leasehold command: -leasehold, or one built
// from ../../cmd (once per run).
func leaseholdBin() (string, error) {
	if *leaseholdCmd != "" {
		return *leaseholdCmd, nil
	}
	return built.get(func(ctx context.Context) (string, error) {
		out := path("leasehold")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./leasehold")
		cmd.Dir = filepath.Join("..", "..", "cmd")
		cmd.Env = append(os.Environ(), "GOWORK=off")
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("building the leasehold command in ../../cmd: %v: %s", err, b)
		}
		return out, nil
	})
}

// served is a `leasehold serve` process.
type served struct {
	URL  string // http://127.0.0.1:PORT
	Pid  int
	cmd  *exec.Cmd
	once sync.Once
}

// startServe runs `leasehold serve` over storeURL on a free loopback port
// until b ends (SIGTERM, then SIGKILL after 30 s), and returns once it
// listens.
func startServe(b *testing.B, storeURL string) *served {
	b.Helper()
	bin, err := leaseholdBin()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--store", storeURL, "--listen", "127.0.0.1:0", "--insecure-loopback", "--json")
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	s := &served{Pid: cmd.Process.Pid, cmd: cmd}
	b.Cleanup(s.stop)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	var ann struct{ URL string }
	if err == nil {
		err = json.Unmarshal([]byte(line), &ann)
	}
	if err != nil || !strings.HasPrefix(ann.URL, "http://") {
		b.Fatalf("leasehold serve --store %s: no URL announced (%q): %v", storeURL, line, err)
	}
	s.URL = ann.URL
	return s
}

// stop ends the server (once; later calls do nothing).
func (s *served) stop() { s.once.Do(s.terminate) }

func (s *served) terminate() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// memory reads a process's resident set (VmRSS) and its peak (VmHWM), in
// bytes, from /proc (Linux only).
func memory(pid int) (rss, hwm int64, err error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, 0, err
	}
	rss, err1 := statusKB(string(b), "VmRSS:")
	hwm, err2 := statusKB(string(b), "VmHWM:")
	return rss, hwm, errors.Join(err1, err2)
}

// anonMemory reads a process's anonymous resident memory (RssAnon), in
// bytes, from /proc (Linux only).
func anonMemory(pid int) (int64, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, err
	}
	return statusKB(string(b), "RssAnon:")
}

// statusKB returns the value in bytes of the "Name:   123 kB" line of a
// /proc/PID/status text.
func statusKB(status, name string) (int64, error) {
	for _, line := range strings.Split(status, "\n") {
		v, ok := strings.CutPrefix(line, name)
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			break
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			break
		}
		return n * 1024, nil
	}
	return 0, fmt.Errorf("no %q line in kB in /proc/PID/status", name)
}
