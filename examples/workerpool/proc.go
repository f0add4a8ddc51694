package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// proc is one worker process started by the driver.
type proc struct {
	name    string
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	logPath string
	done    chan struct{} // closed once the process has exited and its output is read
	exitErr error         // cmd.Wait's error, once done is closed
	killed  bool          // SIGKILLed by the driver: its exit is expected
	paused  bool          // SIGSTOPped by the driver and not yet resumed
}

// line is one event line of a worker: its fields, the kind first.
type line struct {
	p *proc
	f []string
}

// spawn starts a worker process with the driver's control protocol on its
// standard input; its event lines go to lines (until stop closes), its log
// to a file in logDir.
func spawn(bin string, args []string, name, logDir string, lines chan<- line, stop <-chan struct{}) (*proc, error) {
	p := &proc{name: name, logPath: filepath.Join(logDir, name+".log"), done: make(chan struct{})}
	logf, err := os.Create(p.logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child has its own descriptor
	p.cmd = exec.Command(bin, append([]string{"worker", "-name", name, "-control"}, args...)...)
	p.cmd.Stderr = logf
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting worker %s: %w", name, err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- line{p, strings.Fields(sc.Text())}:
			case <-stop:
			}
		}
		p.exitErr = p.cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// send writes one control line.
func (p *proc) send(s string) error {
	_, err := io.WriteString(p.stdin, s+"\n")
	return err
}

func (p *proc) signal(sig syscall.Signal) error { return p.cmd.Process.Signal(sig) }

// kill SIGKILLs the worker (its exit is then expected).
func (p *proc) kill() error {
	p.killed = true
	return p.signal(syscall.SIGKILL)
}

// alive reports whether the process has not exited.
func (p *proc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// stop ends a worker: its control input closes (it finishes or hands back
// its message and exits), SIGCONT in case it is stopped, SIGKILL after
// grace. It returns an error if the worker was not killed by the driver and
// did not exit with status 0 (a -race build exits 66 on a data race). No
// SIGTERM: one arriving after the worker's main has stopped handling
// signals, on its way out, would kill it.
func (p *proc) stop(grace time.Duration) error {
	_ = p.stdin.Close()
	_ = p.signal(syscall.SIGCONT)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		_ = p.signal(syscall.SIGKILL)
		<-p.done
		return fmt.Errorf("worker %s did not stop within %s\n%s", p.name, grace, p.logTail())
	}
	if p.killed || p.exitErr == nil {
		return nil
	}
	return fmt.Errorf("worker %s: %v\n%s", p.name, p.exitErr, p.logTail())
}

// logTail returns the end of the worker's log.
func (p *proc) logTail() string {
	b, _ := os.ReadFile(p.logPath)
	const max = 4000
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return string(b)
}
