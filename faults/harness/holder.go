package harness

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/faults/clock"
	"github.com/leasehold-go/leasehold/faults/history"
	"github.com/leasehold-go/leasehold/faults/resource"
)

// HolderConfig configures a holder process.
type HolderConfig struct {
	ID       string        // holder id ("h1.0")
	URL      string        // store URL
	Resource string        // resource base URL
	Keys     []string      // keys to contend for
	TTL      time.Duration // lease TTL
	Work     time.Duration // the pause between an operation's read and its writes
	Gap      time.Duration // the longest pause between a release and the next acquire (0: TTL/4)
	OpsMin   int           // operations per hold, at least
	OpsMax   int           // operations per hold, at most
	Rate     float64       // clock rate of the lease client (1: the real clock)
	History  string        // history file
	Seed     uint64
}

// Args returns the command-line flags that ParseHolderArgs reads back.
func (c HolderConfig) Args() []string {
	return []string{
		"-id", c.ID, "-url", c.URL, "-resource", c.Resource, "-keys", strings.Join(c.Keys, ","),
		"-ttl", c.TTL.String(), "-work", c.Work.String(), "-gap", c.Gap.String(),
		"-ops", fmt.Sprintf("%d-%d", c.OpsMin, c.OpsMax),
		"-rate", strconv.FormatFloat(c.Rate, 'g', -1, 64), "-history", c.History,
		"-seed", strconv.FormatUint(c.Seed, 10),
	}
}

// ParseHolderArgs parses the flags written by Args.
func ParseHolderArgs(args []string) (HolderConfig, error) {
	var c HolderConfig
	err := parsePairs("holder", args, func(k, v string) (err error) {
		switch k {
		case "-id":
			c.ID = v
		case "-url":
			c.URL = v
		case "-resource":
			c.Resource = v
		case "-keys":
			c.Keys = strings.Split(v, ",")
		case "-ttl":
			c.TTL, err = time.ParseDuration(v)
		case "-work":
			c.Work, err = time.ParseDuration(v)
		case "-gap":
			c.Gap, err = time.ParseDuration(v)
		case "-ops":
			_, err = fmt.Sscanf(v, "%d-%d", &c.OpsMin, &c.OpsMax)
		case "-rate":
			c.Rate, err = strconv.ParseFloat(v, 64)
		case "-history":
			c.History = v
		case "-seed":
			c.Seed, err = strconv.ParseUint(v, 10, 64)
		default:
			return errUnknownFlag
		}
		return err
	})
	if err != nil {
		return c, err
	}
	switch {
	case c.ID == "" || c.URL == "" || c.Resource == "" || c.History == "" || len(c.Keys) == 0:
		return c, errors.New("holder: -id, -url, -resource, -keys and -history are required")
	case c.TTL <= 0 || c.Work <= 0 || c.Gap < 0 || c.OpsMin < 1 || c.OpsMax < c.OpsMin || c.Rate <= 0:
		return c, errors.New("holder: -ttl, -work, -ops and -rate must be positive (-gap not negative)")
	}
	if c.Gap == 0 {
		c.Gap = c.TTL / 4
	}
	for _, k := range c.Keys {
		if err := resource.CheckKey(k); err != nil {
			return c, err
		}
	}
	return c, nil
}

// EnvNoInterrupt, set to 1, makes the harness log and ignore SIGINT,
// SIGTERM and SIGHUP (its holders ignore SIGINT and SIGHUP), for long runs
// on a shared machine where stray signals must not end hours of work.
const EnvNoInterrupt = "LEASEHOLD_FAULTS_NOINTERRUPT"

// Opener opens a store by URL (storeurl.Open).
type Opener func(ctx context.Context, rawURL string) (leasehold.Store, error)

// RunHolder is the holder process: it contends for every key with one
// goroutine per key until ctx ends or the process gets SIGTERM or SIGINT,
// and records its history. SIGUSR1 cuts it off from the store (every store
// call blocks) and SIGUSR2 heals the cut: the partition fault for stores
// without a network.
//
// While it holds a key it performs protected operations: each one passes
// lease.Checkpoint, reads the W1 counter, works for cfg.Work, then writes
// the counter (unfenced) and the W2 register (fenced) without checking the
// lease again, on a context detached from the lease. That is the
// application whose process pauses between its check and its write, the
// case fencing exists for: a pause in the work step makes a stale write
// attempt, which the fence must refuse.
func RunHolder(ctx context.Context, cfg HolderConfig, open Opener) error {
	rec, err := history.NewFileRecorder(cfg.History, cfg.ID)
	if err != nil {
		return err
	}
	defer rec.Close()
	stopSigs := []os.Signal{syscall.SIGTERM, syscall.SIGINT}
	if os.Getenv(EnvNoInterrupt) == "1" {
		signal.Ignore(syscall.SIGINT, syscall.SIGHUP)
		stopSigs = stopSigs[:1] // the harness stops holders with SIGTERM
	}
	ctx, stop := signal.NotifyContext(ctx, stopSigs...)
	defer stop()
	rec.Record(history.Event{Kind: history.EvStart, Note: fmt.Sprintf("pid=%d rate=%g%s", os.Getpid(), cfg.Rate, wallNote())})
	go watchWall(ctx, rec, max(cfg.TTL/20, 5*time.Millisecond))

	store, err := openRetry(ctx, cfg, open, rec)
	if err != nil {
		return err
	}
	defer store.Close()
	wrapped, cut := WrapStore(store, rec)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGUSR2)
	defer signal.Stop(sigs)
	go func() {
		for {
			select {
			case s := <-sigs:
				cut(s == syscall.SIGUSR1)
				rec.Record(history.Event{Kind: history.EvMark, Note: "cut=" + strconv.FormatBool(s == syscall.SIGUSR1)})
			case <-ctx.Done():
				return
			}
		}
	}()

	opts := &leasehold.Options{
		TTL:     cfg.TTL,
		Label:   cfg.ID,
		Backoff: leasehold.ExpBackoff{Base: 5 * time.Millisecond, Cap: max(cfg.TTL/10, 10*time.Millisecond)},
		OnJeopardy: func(j leasehold.Jeopardy) {
			rec.Record(history.Event{Kind: history.EvJeopardy, Key: j.Key, Token: j.Token, Left: int64(j.Remaining), Err: errString(j.Err)})
		},
	}
	if cfg.Rate != 1 {
		opts.Clock = clock.NewRate(cfg.Rate)
	}
	client, err := leasehold.New(wrapped, opts)
	if err != nil {
		return err
	}
	defer client.Close()

	rc := &resource.Client{Base: cfg.Resource, Holder: cfg.ID, HTTP: &http.Client{
		Timeout:   opTimeout,
		Transport: &http.Transport{MaxIdleConnsPerHost: 2 * len(cfg.Keys), IdleConnTimeout: time.Minute},
	}}
	var wg sync.WaitGroup
	var seq atomic.Int64
	for i, key := range cfg.Keys {
		h := &holdLoop{cfg: cfg, key: key, c: client, rc: rc, rec: rec, seq: &seq,
			rng: rand.New(rand.NewPCG(cfg.Seed, uint64(i)))}
		wg.Go(func() { h.run(ctx) })
	}
	wg.Wait()
	rc.HTTP.CloseIdleConnections()
	return nil
}

// openRetry opens the store, retrying while it is unreachable (a holder
// respawned while the store is paused or restarting).
func openRetry(ctx context.Context, cfg HolderConfig, open Opener, rec history.Recorder) (leasehold.Store, error) {
	for {
		octx, cancel := context.WithTimeout(ctx, 5*time.Second)
		s, err := open(octx, cfg.URL)
		cancel()
		if err == nil {
			return s, nil
		}
		rec.Record(history.Event{Kind: history.EvMark, Note: "open store", Err: err.Error()})
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("holder %s: open %s: %w", cfg.ID, cfg.URL, err)
		case <-time.After(cfg.TTL / 4):
		}
	}
}

type holdLoop struct {
	cfg HolderConfig
	key string
	c   *leasehold.Client
	rc  *resource.Client
	rec history.Recorder
	seq *atomic.Int64
	rng *rand.Rand
}

func (h *holdLoop) run(ctx context.Context) {
	for ctx.Err() == nil {
		t0 := history.Mono()
		l, err := h.c.Acquire(ctx, h.key, leasehold.AcquireOptions{Wait: leasehold.WaitForever})
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			h.rec.Record(history.Event{T0: t0, Kind: history.EvAcqFail, Key: h.key, Err: err.Error()})
			sleepCtx(ctx, time.Duration(h.rng.Int64N(int64(h.cfg.TTL/10)+1)))
			continue
		}
		g := l.Grant()
		h.rec.Record(history.Event{T0: t0, Kind: history.EvAcquired, Key: h.key, Token: g.Token, Owner: g.Owner, Left: int64(l.Remaining())})
		stop := context.AfterFunc(l.Context(), func() {
			if cause := context.Cause(l.Context()); errors.Is(cause, leasehold.ErrLost) {
				h.rec.Record(history.Event{Kind: history.EvLost, Key: h.key, Token: g.Token, Owner: g.Owner, Err: cause.Error()})
			}
		})
		n := h.cfg.OpsMin + h.rng.IntN(h.cfg.OpsMax-h.cfg.OpsMin+1)
		for i := 0; i < n && ctx.Err() == nil; i++ {
			if !h.op(ctx, l) {
				break
			}
		}
		err = l.Release(context.WithoutCancel(ctx))
		stop()
		h.rec.Record(history.Event{Kind: history.EvReleased, Key: h.key, Token: g.Token, Owner: g.Owner, Err: errString(err)})
		sleepCtx(ctx, time.Duration(h.rng.Int64N(int64(h.cfg.Gap)+1)))
	}
}

// op performs one protected operation; false ends the hold.
func (h *holdLoop) op(ctx context.Context, l *leasehold.Lease) bool {
	g := l.Grant()
	issued := history.Mono()
	if err := l.Checkpoint(h.cfg.Work + h.cfg.TTL/10); err != nil {
		h.rec.Record(history.Event{T0: issued, Kind: history.EvOpAbort, Key: h.key, Token: g.Token, Owner: g.Owner, Err: err.Error()})
		return false
	}
	left := l.Remaining()
	req := fmt.Sprintf("%s-%d", h.cfg.ID, h.seq.Add(1))
	// Detached from the lease on purpose (see RunHolder), and each request
	// with a timeout of its own that starts when it is sent: a pause in the
	// work step longer than a timeout started before it (a Consul takeover
	// takes 20 s) would fail the write unsent, and the stale write attempt
	// the pause is for would never be made.
	base := context.WithoutCancel(ctx)
	e := history.Event{T0: issued, Kind: history.EvOp, Key: h.key, Token: g.Token, Owner: g.Owner, Req: req, Left: int64(left)}
	octx, cancel := context.WithTimeout(base, opTimeout)
	v, err := h.rc.Read(octx, h.key, g.Owner, req, g.Token)
	cancel()
	if err != nil {
		e.Err = "read: " + err.Error()
		h.rec.Record(e)
		return ctx.Err() == nil
	}
	e.Val = v
	time.Sleep(h.cfg.Work)
	octx, cancel = context.WithTimeout(base, opTimeout)
	if _, err := h.rc.WriteCounter(octx, h.key, g.Owner, req, g.Token, v+1); err != nil {
		e.Err = "counter: " + err.Error()
	}
	cancel()
	f0 := history.Mono()
	octx, cancel = context.WithTimeout(base, opTimeout)
	st, err := h.rc.WriteRegister(octx, h.key, g.Owner, req, g.Token, v+1)
	cancel()
	h.rec.Record(history.Event{T0: f0, Kind: history.EvFWrite, Key: h.key, Token: g.Token, Owner: g.Owner, Req: req, Status: st, Err: errString(err)})
	e.Status = st
	if err != nil && e.Err == "" {
		e.Err = "register: " + err.Error()
	}
	h.rec.Record(e)
	// Fenced out: a newer holder exists, so this hold is over.
	return st != http.StatusConflict
}

// opTimeout bounds each request of a protected operation to the resource.
// It outlasts the longest holder pause (F2 on azblob's 15 s TTL: the
// takeover bound + 1.5 x TTL, about 45 s): the harness pauses a holder
// right after the resource answered its read, so a timer that ran out
// during the pause (5 s, as it was) failed that read on the wake, and the
// operation the pause was aimed at never made its stale write.
const opTimeout = 2 * time.Minute

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// errUnknownFlag is what a parsePairs callback returns for a flag it does
// not know.
var errUnknownFlag = errors.New("unknown flag")

// parsePairs reads the "-name value" pairs that a process of the harness
// (a holder, a CLI child) gets from the harness, calling set for each.
// Errors name the process kind, the flag and its value.
func parsePairs(kind string, args []string, set func(name, value string) error) error {
	if len(args)%2 != 0 {
		return fmt.Errorf("%s: flags come in pairs", kind)
	}
	for i := 0; i < len(args); i += 2 {
		if err := set(args[i], args[i+1]); errors.Is(err, errUnknownFlag) {
			return fmt.Errorf("%s: unknown flag %s", kind, args[i])
		} else if err != nil {
			return fmt.Errorf("%s: flag %s %q: %w", kind, args[i], args[i+1], err)
		}
	}
	return nil
}
