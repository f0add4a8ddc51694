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
	"github.com/leasehold-go/leasehold/rwlock"
	"github.com/leasehold-go/leasehold/semaphore"
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
	slots             int                // --slots: hold one of that many slots of KEY (semaphore); 0: the key itself
	slot              int                // the slot held, once acquired with slots
	metricsAddr       string             // --metrics-addr: serve metrics there
	final             bool               // a loss ends the command (run, elect --once)
	observer          leasehold.Observer // the client's observer (the metrics), if any
	mode              rwlock.Mode        // --read or --write: KEY's read-write lock; 0: a plain lease
	epoch             uint64             // the read-write lock's write epoch, once held
	minHold           time.Duration      // --min-hold: keep the key held that long after the grant
	tick              time.Duration      // --tick: key the lease by the tick of that period, held to its end
}

func (a *app) run(args []string) int {
	fs := newFlags("run")
	key := fs.String("key", "", "the lease's key")
	ttl := durationFlag(fs, "ttl", leasehold.DefaultTTL, "lease duration")
	wait := waitFlag(fs)
	slots := fs.Int("slots", 0, "hold one of N slots of KEY (a semaphore: at most N holders)")
	grace := durationFlag(fs, "grace", defaultGrace, "time between SIGTERM and SIGKILL (default min(10s, the most --ttl allows))")
	label := fs.String("label", "", "how other holders see this one (default host:pid)")
	store, metricsAddr := clientStoreFlag(fs), metricsFlag(fs)
	read, write := rwFlags(fs)
	minHold, tick := holdFlags(fs)
	jsonFlag(fs)
	c, code, ok := a.parse(fs, "run", args)
	if !ok {
		return code
	}
	f := runFlags{name: "run", key: *key, store: *store, label: *label, ttl: *ttl, wait: *wait, grace: *grace, metricsAddr: *metricsAddr, final: true, slots: *slots}
	err := f.checkMode(*read, *write)
	if err == nil {
		err = f.check(fs, c)
	}
	if err == nil {
		err = f.checkHold(fs, *minHold, *tick)
	}
	if err != nil {
		return a.fail("run", err)
	}
	return a.withMetrics(f, a.runCommand)
}

// check validates the flags and takes the command after "--". Only a
// command after "--" is run, so that a misspelt flag never runs as one.
func (f *runFlags) check(fs *flag.FlagSet, c cmdLine) error {
	if err := checkKey(fs); err != nil {
		return err
	}
	if err := checkTTL(f.ttl); err != nil {
		return err
	}
	if err := checkWait(f.wait); err != nil {
		return err
	}
	if f.slots < 0 || f.slots > semaphore.MaxSlots {
		return usagef("--slots %d is outside 1 to %d (0: no semaphore)", f.slots, semaphore.MaxSlots)
	}
	var err error
	if f.grace, err = checkGrace(f.grace, f.ttl, flagGiven(fs, "grace")); err != nil {
		return err
	}
	switch {
	case !c.dashes:
		return usagef("missing -- COMMAND [ARGS...]: nothing to run")
	case len(c.command) == 0:
		return usagef("no command after --")
	}
	f.command = c.command
	return nil
}

// held is what acquiring gave run.
type held struct {
	store  leasehold.Store
	client *leasehold.Client
	lease  *leasehold.Lease
	slot   int    // with --slots: the slot the lease is on
	epoch  uint64 // the read-write lock's write epoch (--read, --write)
	// holdEnd is when run frees the lease after its command exited
	// (--min-hold, --tick; zero: at once).
	holdEnd time.Time
	started bool // the command was started
	err     error
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
		return a.fail(f.name, fmt.Errorf("%w before the lease on %q was acquired", &interrupted{sig: s}, f.key))
	}
	if h.err != nil {
		h.close()
		return a.fail(f.name, h.err)
	}
	if info := h.store.Info(); !info.SafeTokens {
		fmt.Fprintf(a.stderr, "leasehold %s: warning: the %s store's tokens are not fencing tokens (%s); do not use LEASEHOLD_TOKEN to reject stale writes\n", f.name,
			info.Name, strings.TrimSuffix(orDefault(info.TokenCaveat, "the store does not promise increasing tokens"), "."))
	}
	f.slot = h.slot
	f.epoch = h.epoch
	code := a.holdOn(f, h, a.supervise(f, h, sigs), sigs)
	if err := h.close(); err != nil {
		if errors.Is(err, leasehold.ErrLost) {
			if code != exitLost {
				return a.endLost(f, fmt.Errorf("%w; the command may have run without it", err), false)
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
	opts := leasehold.AcquireOptions{TTL: f.ttl, Wait: f.wait}
	if f.mode != 0 {
		h.lease, h.epoch, h.err = lockRW(ctx, h.client, f)
		return h
	}
	if f.slots == 0 {
		p := f.planHold(time.Now())
		h.lease, h.err = h.client.Acquire(ctx, p.key, p.opts)
		if h.err == nil {
			h.holdEnd = p.holdEnd(f, time.Now())
		}
		return h
	}
	sem, err := semaphore.New(h.client, f.slots, nil)
	if err != nil {
		h.err = err
		return h
	}
	p, err := sem.Acquire(ctx, f.key, opts)
	if err == nil {
		h.lease, h.slot = p.Lease, p.Slot()
	}
	h.err = err
	return h
}

// supervise runs the command while h's lease is held and returns run's
// exit status. It sets h.started once the command has started.
func (a *app) supervise(f runFlags, h *held, sigs <-chan os.Signal) int {
	l := h.lease
	cmd := exec.Command(f.command[0], f.command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = a.stdin, a.stdout, a.stderr
	cmd.Env = append(os.Environ(),
		"LEASEHOLD_KEY="+l.Key(),
		"LEASEHOLD_TOKEN="+strconv.FormatUint(l.Token(), 10),
		"LEASEHOLD_OWNER="+l.Owner(),
	)
	if f.slots > 0 {
		cmd.Env = append(cmd.Env, "LEASEHOLD_SLOT="+strconv.Itoa(f.slot))
	}
	if f.name == "elect" {
		cmd.Env = append(cmd.Env, "LEASEHOLD_EPOCH="+strconv.FormatUint(l.Token(), 10))
	}
	if f.mode != 0 {
		cmd.Env = append(cmd.Env, "LEASEHOLD_MODE="+f.mode.String(), "LEASEHOLD_EPOCH="+strconv.FormatUint(f.epoch, 10))
	}
	// A lease already lost, or too close to its deadline to stop the
	// command in time, must not start it at all.
	if err := l.Checkpoint(f.grace); err != nil {
		return a.endLost(f, fmt.Errorf("not starting the command: %w", err), false)
	}
	// The watchdog comes first, so that the command never runs unguarded.
	wd, err := startWatchdog(f.grace, a.stderr)
	if err != nil {
		return a.fail(f.name, err)
	}
	var stdout, stderr *os.File
	stdout, _ = a.stdout.(*os.File)
	stderr, _ = a.stderr.(*os.File)
	c, err := startGroup(cmd, foregroundTTY(a.stdin, stdout, stderr))
	if err != nil {
		wd.done()
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return a.fail(f.name, &codedError{code: exitNotFound, err: err})
		}
		return a.fail(f.name, &codedError{code: exitCannotExec, err: err})
	}
	h.started = true
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
		err := l.Err()
		if !errors.Is(err, leasehold.ErrLost) {
			err = fmt.Errorf("%w: no renewal extended the lease on %q before --grace was left, so the command was stopped", leasehold.ErrLost, l.Key())
		}
		return a.endLost(f, err, true)
	}
	return code
}

// endLost reports a loss of the lease that ends run, or one campaign of
// elect, and returns exitLost. said: the loss was reported, in text, as it
// happened. With --json, a loss that ends the command (run, elect --once)
// is its JSON error.
func (a *app) endLost(f runFlags, err error, said bool) int {
	switch {
	case a.jsonErrors && f.final:
		a.failJSON(f.name, &codedError{code: exitLost, err: err})
	case !said:
		fmt.Fprintf(a.stderr, "leasehold %s: %s\n", f.name, message(err))
	}
	return exitLost
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
