package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/leasehold-go/leasehold"
)

// forwarded are the signals that run passes on to the command's process
// group. A signal that was ignored when leasehold started stays ignored (a
// command started in the background of a script keeps ignoring SIGINT).
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// runFlags are the parsed flags of run.
type runFlags struct {
	key, store, label string
	ttl, wait, grace  time.Duration
	command           []string
}

func (a *app) run(args []string) int {
	fs := newFlags("run")
	key := fs.String("key", "", "the lease's key")
	ttl := durationFlag(fs, "ttl", leasehold.DefaultTTL, "lease duration")
	wait := durationFlag(fs, "wait", 0, "how long to wait for the key (0: try once)")
	grace := durationFlag(fs, "grace", 10*time.Second, "time between SIGTERM and SIGKILL when the lease is lost")
	label := fs.String("label", "", "how other holders see this one (default host:pid)")
	store := storeFlag(fs)
	if code, ok := a.parse(fs, "run", args); !ok {
		return code
	}
	f := runFlags{key: *key, store: *store, label: *label, ttl: *ttl, wait: *wait, grace: *grace}
	if err := f.check(args, fs.Args()); err != nil {
		return a.fail("run", err)
	}
	return a.runCommand(f)
}

// check validates the flags and takes the command after "--".
func (f *runFlags) check(args, rest []string) error {
	if err := checkKey(f.key); err != nil {
		return err
	}
	if err := checkTTL(f.ttl); err != nil {
		return err
	}
	if err := checkWait(f.wait); err != nil {
		return err
	}
	if f.grace < 0 {
		return usagef("--grace %s is negative", f.grace)
	}
	// The flag package stops at "--" (and drops it) or at the first
	// argument that is not a flag; only the first is accepted, so that a
	// misspelt flag is never run as a command.
	if n := len(args) - len(rest); n == 0 || args[n-1] != "--" {
		if len(rest) > 0 {
			return usagef("missing -- before the command (write leasehold run --key KEY -- %s ...)", rest[0])
		}
		return usagef("missing -- COMMAND [ARGS...]: nothing to run")
	}
	if len(rest) == 0 {
		return usagef("no command after --")
	}
	f.command = rest
	return nil
}

// held is what acquiring gave run.
type held struct {
	store  leasehold.Store
	client *leasehold.Client
	lease  *leasehold.Lease
	err    error
}

// close releases what h holds. It returns the lease's release error.
func (h *held) close() error {
	var err error
	if h.lease != nil {
		err = h.lease.Release(context.Background())
	}
	if h.client != nil {
		h.client.Close()
	}
	if h.store != nil {
		h.store.Close()
	}
	return err
}

func (a *app) runCommand(f runFlags) int {
	sigs := make(chan os.Signal, 8)
	for _, s := range forwarded {
		if !signal.Ignored(s) {
			signal.Notify(sigs, s)
		}
	}
	defer signal.Stop(sigs)

	// Acquire in the background, so that a signal can end the wait.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan *held, 1)
	go func() { got <- a.acquireLease(ctx, f) }()
	var h *held
	select {
	case h = <-got:
	case s := <-sigs:
		cancel()
		h = <-got
		h.close()
		fmt.Fprintf(a.stderr, "leasehold run: interrupted by %s before the lease on %q was acquired\n", s, f.key)
		return 128 + signum(s)
	}
	if h.err != nil {
		h.close()
		return a.fail("run", h.err)
	}
	code := a.supervise(f, h.lease, sigs)
	if err := h.close(); err != nil {
		if errors.Is(err, leasehold.ErrLost) {
			if code != exitLost {
				fmt.Fprintf(a.stderr, "leasehold run: %s; the command may have run without it\n", message(err))
			}
			return exitLost
		}
		fmt.Fprintf(a.stderr, "leasehold run: warning: releasing the lease failed, it ends with its TTL: %s\n", message(err))
	}
	return code
}

// acquireLease opens the store and acquires the lease for run.
func (a *app) acquireLease(ctx context.Context, f runFlags) *held {
	h := &held{}
	h.store, h.err = openStore(ctx, f.store)
	if h.err != nil {
		return h
	}
	h.client, h.err = leasehold.New(h.store, &leasehold.Options{
		TTL:   f.ttl,
		Label: f.label,
		OnJeopardy: func(j leasehold.Jeopardy) {
			fmt.Fprintf(a.stderr, "leasehold run: warning: renewing the lease on %q failed (%s); %s left before it is lost\n",
				j.Key, message(j.Err), roundDuration(j.Remaining))
		},
	})
	if h.err != nil {
		return h
	}
	h.lease, h.err = h.client.Acquire(ctx, f.key, leasehold.AcquireOptions{TTL: f.ttl, Wait: f.wait})
	return h
}

// supervise runs the command while l is held and returns run's exit status.
func (a *app) supervise(f runFlags, l *leasehold.Lease, sigs <-chan os.Signal) int {
	cmd := exec.Command(f.command[0], f.command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = a.stdin, a.stdout, a.stderr
	cmd.Env = append(os.Environ(),
		"LEASEHOLD_KEY="+l.Key(),
		"LEASEHOLD_TOKEN="+strconv.FormatUint(l.Token(), 10),
		"LEASEHOLD_OWNER="+l.Owner(),
	)
	var stdout, stderr *os.File
	stdout, _ = a.stdout.(*os.File)
	stderr, _ = a.stderr.(*os.File)
	c, err := startGroup(cmd, foregroundTTY(a.stdin, stdout, stderr))
	if err != nil {
		fmt.Fprintf(a.stderr, "leasehold run: %v\n", err)
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return exitNotFound
		}
		return exitCannotExec
	}

	lost := l.Done()
	var lostErr error
	var graceOver <-chan time.Time
	for done := false; !done; {
		select {
		case <-c.exited:
			done = true
		case s := <-sigs:
			c.signal(s.(syscall.Signal))
		case <-c.stopped:
			c.suspend()
		case <-lost:
			lost = nil
			lostErr = l.Err()
			fmt.Fprintf(a.stderr, "leasehold run: %s; stopping the command (SIGTERM, then SIGKILL after %s)\n", message(lostErr), f.grace)
			c.signal(syscall.SIGTERM)
			t := time.NewTimer(f.grace)
			defer t.Stop()
			graceOver = t.C
		case <-graceOver:
			graceOver = nil
			fmt.Fprintf(a.stderr, "leasehold run: the command outlived the grace period; sending SIGKILL\n")
			c.signal(syscall.SIGKILL)
		}
	}
	if lostErr != nil {
		// Whatever is left of the group must not run on without the
		// lease. The leader is not reaped yet, so its process group id
		// cannot have been reused.
		c.signal(syscall.SIGKILL)
	}
	code := c.wait()
	if lostErr != nil {
		return exitLost
	}
	return code
}

// signum is s's number, for the 128+N exit statuses.
func signum(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return int(n)
	}
	return 0
}
