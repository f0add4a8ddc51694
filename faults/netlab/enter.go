package netlab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// Env is the environment variable that carries the private namespace's
// state to the processes of the run: "enter" in the process that Enter
// re-executed (it sets the namespace up), then "inside" for it and
// everything it starts; "off" makes Enter do nothing (a run without the
// lab: the member partitions do not run then).
const Env = "LEASEHOLD_NETLAB"

// ErrOff means the lab was turned off (LEASEHOLD_NETLAB=off): the process
// runs in the host's network namespace and builds no lab.
var ErrOff = errors.New("netlab: off (" + Env + "=off)")

// netnsDir is where `ip netns` keeps its namespaces' handles. Enter mounts
// a private tmpfs there, so that no handle of the run shows on the host.
const netnsDir = "/var/run/netns"

// Enter puts the process in a private network and mount namespace of its
// own. Outside one, it re-executes the process's binary with the same
// arguments under `unshare --net --mount --propagation private`, waits for
// it, and exits with its status (it does not return then): the process
// that goes on is the re-executed one, whose servers, holders and proxies
// live in the private namespace, which vanishes with the process tree, so
// nothing reaches the host's network, even after a SIGKILL. Inside (the
// re-executed process), it brings the loopback up (every store's loopback
// addresses keep working), mounts a private tmpfs on /var/run/netns, and
// returns nil. A process started by one already inside returns nil at
// once. With LEASEHOLD_NETLAB=off, Enter returns ErrOff and does nothing.
func Enter() error {
	switch os.Getenv(Env) {
	case "off":
		return ErrOff
	case "inside":
		return nil
	case "enter":
		if err := setupInside(); err != nil {
			return err
		}
		return os.Setenv(Env, "inside")
	}
	code, err := reexec()
	if err != nil {
		return err
	}
	os.Exit(code)
	return nil
}

// Inside reports whether the process runs in the private namespace that
// Enter made.
func Inside() bool { return os.Getenv(Env) == "inside" }

// reexec runs the process again under unshare and returns its exit status.
// SIGINT, SIGTERM and SIGHUP are passed on to it; it gets SIGKILL if this
// process dies.
func reexec() (int, error) {
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return 0, fmt.Errorf("netlab: %w (util-linux's unshare runs the process in a private network namespace)", err)
	}
	self, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("netlab: %w", err)
	}
	args := append([]string{"--net", "--mount", "--propagation", "private", "--", self}, os.Args[1:]...)
	cmd := exec.Command(unshare, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), Env+"=enter")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("netlab: %s: %w", cmd, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case sig := <-sigs:
			_ = cmd.Process.Signal(sig)
		case err := <-done:
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					return 128 + int(ws.Signal()), nil
				}
				return ee.ExitCode(), nil
			}
			if err != nil {
				return 0, fmt.Errorf("netlab: %s: %w", cmd, err)
			}
			return 0, nil
		}
	}
}

// setupInside checks that the process's network namespace is not its
// parent's (unshare did its work), brings lo up and mounts the private
// tmpfs for the lab's namespace handles.
func setupInside() error {
	self, err1 := os.Readlink("/proc/self/ns/net")
	parent, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", os.Getppid()))
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("netlab: %w", err)
	}
	if self == parent {
		return fmt.Errorf("netlab: %s=enter but the process shares its parent's network namespace (%s)", Env, self)
	}
	if err := os.MkdirAll(netnsDir, 0o755); err != nil {
		return fmt.Errorf("netlab: %w", err)
	}
	if err := syscall.Mount("netlab", netnsDir, "tmpfs", 0, "mode=755"); err != nil {
		return fmt.Errorf("netlab: mount a tmpfs on %s: %w", netnsDir, err)
	}
	_, err := run(context.Background(), "ip", "link", "set", "lo", "up")
	return err
}
