package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
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
	name              string // the command: run, or elect
	key, store, label string
	ttl, wait, grace  time.Duration
	command           []string
	metricsAddr       string             // --metrics-addr: serve metrics there
	observer          leasehold.Observer // the client's observer (the metrics), if any
}

func (a *app) run(args []string) int {
	fs := newFlags("run")
	key := fs.String("key", "", "the lease's key")
	ttl := durationFlag(fs, "ttl", leasehold.DefaultTTL, "lease duration")
	wait := waitFlag(fs)
	grace := durationFlag(fs, "grace", defaultGrace, "time between SIGTERM and SIGKILL (default min(10s, the most --ttl allows))")
	label := fs.String("label", "", "how other holders see this one (default host:pid)")
	store, metricsAddr := storeFlag(fs), metricsFlag(fs)
	if code, ok := a.parse(fs, "run", args); !ok {
		return code
	}
	f := runFlags{name: "run", key: *key, store: *store, label: *label, ttl: *ttl, wait: *wait, grace: *grace, metricsAddr: *metricsAddr}
	graceGiven := false
	fs.Visit(func(fl *flag.Flag) { graceGiven = graceGiven || fl.Name == "grace" })
	if err := f.check(args, fs.Args(), graceGiven); err != nil {
		return a.fail("run", err)
	}
	return a.withMetrics(f, a.runCommand)
}

// check validates the flags and takes the command after "--".
func (f *runFlags) check(args, rest []string, graceGiven bool) error {
	// The flag package stops at "--" (dropped) or at the first non-flag;
	// only "--" is accepted, so a misspelt flag never runs as a command, and
	// a stray key (run --ttl 1s KEY -- CMD) is named, not a missing --key.
	dashes := len(args) > len(rest) && args[len(args)-len(rest)-1] == "--"
	if f.key == "" && !dashes && len(rest) > 0 {
		return usagef("unexpected argument %q (the key goes first, before the flags, or anywhere as --key KEY)", rest[0])
	}
	if err := checkKey(f.key); err != nil {
		return err
	}
	if err := checkTTL(f.ttl); err != nil {
		return err
	}
	if err := checkWait(f.wait); err != nil {
		return err
	}
	var err error
	if f.grace, err = checkGrace(f.grace, f.ttl, graceGiven); err != nil {
		return err
	}
	if !dashes {
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
		fmt.Fprintf(a.stderr, "leasehold %s: interrupted by %s before the lease on %q was acquired\n", f.name, s, f.key)
		return 128 + signum(s)
	}
	if h.err != nil {
		h.close()
		return a.fail("run", h.err)
	}
	if info := h.store.Info(); !info.SafeTokens {
		fmt.Fprintf(a.stderr, "leasehold %s: warning: the %s store's tokens are not fencing tokens (%s); do not use LEASEHOLD_TOKEN to reject stale writes\n", f.name,
			info.Name, strings.TrimSuffix(orDefault(info.TokenCaveat, "the store does not promise increasing tokens"), "."))
	}
	code := a.supervise(f, h.lease, sigs)
	if err := h.close(); err != nil {
		if errors.Is(err, leasehold.ErrLost) {
			if code != exitLost {
				fmt.Fprintf(a.stderr, "leasehold %s: %s; the command may have run without it\n", f.name, message(err))
			}
			return exitLost
		}
		fmt.Fprintf(a.stderr, "leasehold %s: warning: releasing the lease failed, it ends with its TTL: %s\n", f.name, message(err))
	}
	return code
}

// acquireLease opens the store and acquires the lease for run.
func (a *app) acquireLease(ctx context.Context, f runFlags) *held {
	st, err := openStore(ctx, f.store)
	if err != nil {
		return &held{err: err} // no store: close must not Close what failed to open
	}
	h := &held{store: st}
	h.client, h.err = leasehold.New(h.store, &leasehold.Options{
		TTL:      f.ttl,
		Label:    f.label,
		Observer: a.observer(f.observer),
		OnJeopardy: func(j leasehold.Jeopardy) {
			fmt.Fprintf(a.stderr, "leasehold %s: warning: renewing the lease on %q failed (%s); %s left before it is lost\n", f.name,
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
	if f.name == "elect" {
		cmd.Env = append(cmd.Env, "LEASEHOLD_EPOCH="+strconv.FormatUint(l.Token(), 10))
	}
	// A lease already lost, or too close to its deadline to stop the
	// command in time, must not start it at all.
	if err := l.Checkpoint(f.grace); err != nil {
		fmt.Fprintf(a.stderr, "leasehold %s: not starting the command: %s\n", f.name, message(err))
		return exitLost
	}
	// The watchdog comes first, so that the command never runs unguarded.
	wd, err := startWatchdog(f.grace, a.stderr)
	if err != nil {
		fmt.Fprintf(a.stderr, "leasehold %s: %v\n", f.name, err)
		return exitFailure
	}
	var stdout, stderr *os.File
	stdout, _ = a.stdout.(*os.File)
	stderr, _ = a.stderr.(*os.File)
	c, err := startGroup(cmd, foregroundTTY(a.stdin, stdout, stderr))
	if err != nil {
		wd.done()
		fmt.Fprintf(a.stderr, "leasehold %s: %v\n", f.name, err)
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return exitNotFound
		}
		return exitCannotExec
	}
	g := &guard{a: a, f: f, l: l, c: c, wd: wd, deadline: l.Deadline()}
	wd.guard(c.pid, g.deadline)
	g.loop(sigs)
	g.settle()
	// Whatever is left of the group (a background process of the command)
	// must not run on once the lease is released. The leader is not
	// reaped yet, so its process group id cannot have been reused.
	c.signal(syscall.SIGKILL)
	g.standDown()
	code := c.wait()
	if g.stopping {
		return exitLost
	}
	return code
}

// guard enforces the rule of run: the command's process group is dead by
// the holder's deadline, which comes before the store can grant the key to
// anyone else. When the time left falls to --grace and no renewal has moved
// the deadline, it sends SIGTERM; at the deadline, SIGKILL. The watchdog
// does the same from outside, for when leasehold itself cannot.
type guard struct {
	a  *app
	f  runFlags
	l  *leasehold.Lease
	c  *child
	wd *watchdog

	deadline time.Time // the holder's deadline, as the watchdog knows it
	stopping bool      // SIGTERM has gone out; it is final
	killAt   time.Time // when stopping: when SIGKILL goes out
	killed   bool
	lostSaid bool // the loss of the lease has been reported
}

// pollPeriod is how often the guard looks for a renewal that moved the
// deadline, to pass it on to the watchdog well before it acts.
func pollPeriod(ttl time.Duration) time.Duration {
	return min(max(ttl/50, 10*time.Millisecond), 200*time.Millisecond)
}

// loop supervises until the command exits.
func (g *guard) loop(sigs <-chan os.Signal) {
	lost := g.l.Done()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-g.c.exited:
			return
		case s := <-sigs:
			g.c.signal(s.(syscall.Signal))
		case <-g.c.stopped:
			g.c.suspend()
		case <-lost:
			lost = nil
			g.lostSaid = true
			if g.stopping {
				fmt.Fprintf(g.a.stderr, "leasehold %s: %s\n", g.f.name, message(g.l.Err()))
				break
			}
			// Refused, or the deadline passed: SIGKILL by the deadline
			// at the latest, even if that cuts the grace short.
			g.stop(fmt.Sprintf("%s; stopping the command", message(g.l.Err())), min(time.Until(g.deadline), g.f.grace))
		case e, ok := <-g.wd.events:
			switch {
			case !ok:
				g.wd.events = nil
			case e == "term" || e == "kill":
				g.watchdogStopped(e == "kill")
			}
		case <-t.C:
		}
		g.tick()
		t.Reset(g.next())
	}
}

// drain takes in the watchdog's reports that are waiting, so that leasehold,
// continued after a stop, knows what the watchdog did meanwhile.
func (g *guard) drain() {
	for g.wd.events != nil {
		select {
		case e, ok := <-g.wd.events:
			if !ok {
				g.wd.events = nil
				return
			}
			if e == "term" || e == "kill" {
				g.watchdogStopped(e == "kill")
			}
		default:
			return
		}
	}
}

// settle runs once the command has exited: it takes in the watchdog's last
// reports and says that the lease was lost, if it was and that was not said.
func (g *guard) settle() {
	g.drain()
	if !time.Now().Before(g.l.Deadline()) {
		// The deadline has passed (leasehold was stopped past it, say), so
		// the client is ending the lease; its scheduler may not have run
		// yet after a SIGCONT. Take in the loss it is about to report.
		select {
		case <-g.l.Done():
		case <-time.After(time.Second):
		}
	}
	if err := g.l.Err(); errors.Is(err, leasehold.ErrLost) && !g.lostSaid {
		g.lostSaid = true
		fmt.Fprintf(g.a.stderr, "leasehold %s: %s\n", g.f.name, message(err))
	}
}

// watchdogStopped takes in that the watchdog began termination (SIGTERM),
// or killed the group, because leasehold had not extended the deadline.
func (g *guard) watchdogStopped(killed bool) {
	if !g.stopping {
		g.stopping = true
		g.killAt = g.deadline
		fmt.Fprintf(g.a.stderr, "leasehold %s: the watchdog began stopping the command: leasehold did not extend the lease in time (it was stopped or starved)\n", g.f.name)
	}
	g.killed = g.killed || killed
}

// tick passes a renewal on to the watchdog and acts on the clock.
func (g *guard) tick() {
	g.drain()
	if !g.stopping {
		if d := g.l.Deadline(); d.After(g.deadline) && g.l.Err() == nil {
			g.deadline = d
			g.wd.extend(d)
		}
		if left := time.Until(g.deadline); left <= g.f.grace {
			g.awaitWatchdog(left) // past the deadline, it has acted: hear it first
			g.stop(fmt.Sprintf("the lease on %q has %s left and no renewal has extended it; stopping the command", g.l.Key(), roundDuration(max(left, 0))), left)
		}
	}
	if g.stopping && !g.killed && !time.Now().Before(g.killAt) {
		g.killed = true
		// Signal first: a stalled stderr must not delay the kill.
		g.c.signal(syscall.SIGKILL)
		fmt.Fprintf(g.a.stderr, "leasehold %s: the command outlived the grace period; sent SIGKILL to its process group\n", g.f.name)
	}
}

// stop begins termination: SIGTERM now, SIGKILL after grace.
func (g *guard) stop(why string, grace time.Duration) {
	if g.stopping {
		return
	}
	g.stopping = true
	grace = max(grace, 0)
	g.killAt = time.Now().Add(grace)
	g.c.signal(syscall.SIGTERM) // before the message, which may block
	fmt.Fprintf(g.a.stderr, "leasehold %s: %s (SIGTERM, then SIGKILL after %s)\n", g.f.name, why, roundDuration(grace))
}

// next is how long until the guard must look again.
func (g *guard) next() time.Duration {
	if g.stopping {
		if g.killed {
			return time.Hour
		}
		return max(time.Until(g.killAt), 0)
	}
	return max(min(time.Until(g.deadline.Add(-g.f.grace)), pollPeriod(g.f.ttl)), 0)
}

// signum is s's number, for the 128+N exit statuses.
func signum(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return int(n)
	}
	return 0
}

// orDefault returns s, or def when s is empty.
func orDefault(s, def string) string { return cmp.Or(s, def) }
