package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold-go/leasehold"
)

// HerdOptions configure Herd. The zero value measures 20 hand-offs among
// 8 waiters.
type HerdOptions struct {
	// Name labels the result; default the store's Info().Name.
	Name string
	// Waiters is the number of clients waiting while one holds; default 8.
	Waiters int
	// Releases is the number of hand-offs to measure; default 20.
	Releases int
	// Hold is how long each winner holds the key; default 20 ms.
	Hold time.Duration
	// TTL of the leases; default 10 s, raised to the store's MinTTL.
	TTL time.Duration
	// MaxDuration bounds the measurement; default 30 s.
	MaxDuration time.Duration
	// OpTimeout bounds each release; default 10 s.
	OpTimeout time.Duration
	// Prefix starts the key; default a fresh NewPrefix.
	Prefix string
	// Progress, if set, is called every ProgressEvery; default 500 ms.
	Progress      func(Progress)
	ProgressEvery time.Duration
}

func (o HerdOptions) withDefaults(info leasehold.Info) (HerdOptions, error) {
	if o.Name == "" {
		o.Name = info.Name
	}
	if o.Waiters == 0 {
		o.Waiters = 8
	}
	if o.Waiters < 0 {
		return o, fmt.Errorf("bench: %d waiters: the number of waiters must be positive", o.Waiters)
	}
	if o.Releases <= 0 {
		o.Releases = 20
	}
	if o.Hold <= 0 {
		o.Hold = 20 * time.Millisecond
	}
	var err error
	if o.TTL, err = ttlFor(o.TTL, 10*time.Second, info); err != nil {
		return o, err
	}
	if o.MaxDuration <= 0 {
		o.MaxDuration = 30 * time.Second
	}
	if o.OpTimeout <= 0 {
		o.OpTimeout = 10 * time.Second
	}
	if o.Prefix == "" {
		o.Prefix = NewPrefix()
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 500 * time.Millisecond
	}
	return o, nil
}

// Herd measures the thundering herd on s: o.Waiters+1 clients cycle on one
// key, each holding it for o.Hold, so that o.Waiters wait while one holds.
// It counts the store acquire attempts (polls, and wake-ups on the store's
// notification) made per hand-off, and times each hand-off from the
// Release call to the next client's Acquire returning. It does not close s.
//
// Every lease is released before Herd returns. If ctx ends first, Herd
// returns what it measured with Partial set, together with ctx's error.
func Herd(ctx context.Context, s leasehold.Store, o HerdOptions) (HerdResult, error) {
	o, err := o.withDefaults(s.Info())
	if err != nil {
		return HerdResult{}, err
	}
	res := HerdResult{Store: o.Name, Waiters: o.Waiters}
	cs, cnt := count(s)
	cl, err := leasehold.New(cs, &leasehold.Options{TTL: o.TTL, Label: Label, ReleaseTimeout: o.OpTimeout})
	if err != nil {
		return res, err
	}
	defer cl.Close()

	h := &herd{ctx: ctx, cl: cl, cnt: cnt, o: o, key: o.Prefix + "herd"}
	h.hctx, h.cancel = context.WithTimeout(ctx, o.MaxDuration)
	defer h.cancel()
	begin := time.Now()

	// The first holder takes the key before the waiters start.
	octx, ocancel := opContext(ctx, o.OpTimeout)
	first, err := cl.Acquire(octx, h.key, leasehold.AcquireOptions{TTL: o.TTL})
	ocancel()
	if err != nil {
		h.errs.add("acquire", err)
		res.Errors, res.FirstError = h.errs.n.Load(), h.errs.firstError()
		return res, nil
	}

	h.startWaiters()
	if o.Progress != nil {
		stop := ticker(o.ProgressEvery, func() {
			o.Progress(Progress{Store: o.Name, Clients: o.Waiters, Phase: "herd", Elapsed: time.Since(begin),
				Done: h.releases.Load(), Target: int64(o.Releases), Errors: h.errs.n.Load()})
		})
		defer stop()
	}
	h.wg.Add(1)
	go func() {
		h.hold(first)
		h.participant()
	}()
	h.wg.Wait()
	res.Elapsed = time.Since(begin)
	return h.result(res)
}

// herd is the state of one Herd measurement, shared by its participants.
type herd struct {
	ctx    context.Context // the caller's: bounds the releases
	hctx   context.Context // ends when the measurement ends
	cancel context.CancelFunc
	cl     *leasehold.Client
	cnt    *counter
	o      HerdOptions
	key    string

	errs      tally
	releases  atomic.Int64
	wg        sync.WaitGroup
	mu        sync.Mutex
	samples   []time.Duration
	lastRel   time.Time // start of the last Release call; zero before the first
	attempts0 int64     // attempts counted when the first release starts
}

// hold keeps l for o.Hold, then releases it and notes the time.
func (h *herd) hold(l *leasehold.Lease) {
	sleepCtx(h.hctx, h.o.Hold)
	h.mu.Lock()
	if h.lastRel.IsZero() {
		h.attempts0 = h.cnt.attempts.Load()
	}
	h.lastRel = time.Now()
	h.mu.Unlock()
	if err := l.Release(h.ctx); err != nil {
		h.errs.add("release", err)
	}
}

// participant waits for the key, notes the hand-off, holds the key and
// releases it, until the measurement ends.
func (h *herd) participant() {
	defer h.wg.Done()
	for h.hctx.Err() == nil {
		// The wait is detached from hctx: when the measurement ends,
		// every waiter still gets the key in turn and releases it at
		// once, so no grant is left that the client never saw.
		wctx, wcancel := opContext(h.ctx, h.o.MaxDuration+h.o.OpTimeout)
		l, err := h.cl.Acquire(wctx, h.key, leasehold.AcquireOptions{TTL: h.o.TTL, Wait: leasehold.WaitForever})
		wcancel()
		if err != nil {
			h.errs.add("acquire", err)
			sleepCtx(h.hctx, 10*time.Millisecond)
			continue
		}
		at := time.Now()
		h.mu.Lock()
		if !h.lastRel.IsZero() && h.hctx.Err() == nil {
			h.samples = append(h.samples, at.Sub(h.lastRel))
			if h.releases.Add(1) >= int64(h.o.Releases) {
				h.cancel()
			}
		}
		h.mu.Unlock()
		h.hold(l)
	}
}

// startWaiters starts the waiters one by one, waiting after each until it
// has made its first attempt, so that all of them are waiting when the
// first holder releases.
func (h *herd) startWaiters() {
	for range h.o.Waiters {
		h.wg.Add(1)
		before := h.cnt.attempts.Load()
		go h.participant()
		for h.cnt.attempts.Load() == before && h.hctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
	}
}

// result fills in res from what the participants measured.
func (h *herd) result(res HerdResult) (HerdResult, error) {
	o := h.o
	h.mu.Lock()
	res.Releases = h.releases.Load()
	if !h.lastRel.IsZero() {
		res.Attempts = h.cnt.attempts.Load() - h.attempts0
	}
	res.Handoff = Summarize(h.samples)
	h.mu.Unlock()
	if res.Releases > 0 {
		res.WakeupsPerRelease = float64(res.Attempts) / float64(res.Releases)
	}
	res.Errors, res.FirstError = h.errs.n.Load(), h.errs.firstError()
	if err := h.ctx.Err(); err != nil {
		res.Partial = true
		return res, err
	}
	if res.Releases < int64(o.Releases) && errors.Is(h.hctx.Err(), context.DeadlineExceeded) {
		h.errs.add("herd", fmt.Errorf("only %d of %d hand-offs within %s", res.Releases, o.Releases, o.MaxDuration))
		res.Errors, res.FirstError = h.errs.n.Load(), h.errs.firstError()
	}
	return res, nil
}
