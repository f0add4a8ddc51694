package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold-go/leasehold"
)

// Label is the holder label of every lease the package takes.
const Label = "leasehold-bench"

// tally collects errors from many goroutines.
type tally struct {
	n     atomic.Int64
	mu    sync.Mutex
	first string
}

func (t *tally) add(op string, err error) {
	t.n.Add(1)
	t.mu.Lock()
	if t.first == "" {
		t.first = op + ": " + err.Error()
	}
	t.mu.Unlock()
}

func (t *tally) firstError() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.first
}

// ticker calls report every d until stop is called.
func ticker(d time.Duration, report func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				report()
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// opContext returns a context for one store operation: detached from ctx,
// so that an interrupt never leaves a grant made but unknown to the run,
// and bounded by timeout.
func opContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), timeout)
}

// sleepCtx sleeps d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// Run measures acquire+release cycles on s with o.Clients concurrent
// clients for o.Duration, while o.Holders leases with a short TTL are held
// and renewed; then it times o.HandoffRounds hand-offs from a release to a
// waiting client. It does not close s.
//
// Every lease Run takes is released before it returns. If ctx ends first,
// Run stops, releases what it holds, and returns what it measured so far
// with Partial set, together with ctx's error. Other errors are returned
// only for invalid options; store failures during the run are counted in
// the result's Errors.
func Run(ctx context.Context, s leasehold.Store, o Options) (Result, error) {
	o, err := o.withDefaults(s.Info())
	if err != nil {
		return Result{}, err
	}
	res := Result{Store: o.Name, Clients: o.Clients, Keys: o.Keys}
	var errs tally

	cs, cnt := count(s)
	cl, err := leasehold.New(cs, &leasehold.Options{TTL: o.TTL, Label: Label, ReleaseTimeout: o.OpTimeout})
	if err != nil {
		return res, err
	}
	defer cl.Close()
	hs, hcnt := count(s)
	hcl, err := leasehold.New(hs, &leasehold.Options{TTL: o.HoldTTL, Label: Label, ReleaseTimeout: o.OpTimeout})
	if err != nil {
		return res, err
	}
	defer hcl.Close()

	// Leases held while the clients cycle, renewed by hcl.
	var held []*leasehold.Lease
	holdStart := time.Now()
	for i := 0; i < o.Holders && ctx.Err() == nil; i++ {
		octx, cancel := opContext(ctx, o.OpTimeout)
		l, err := hcl.Acquire(octx, o.Prefix+"hold/"+strconv.Itoa(i), leasehold.AcquireOptions{TTL: o.HoldTTL})
		cancel()
		if err != nil {
			errs.add("hold", err)
			continue
		}
		held = append(held, l)
	}
	res.Holders = len(held)
	releaseHeld := func() {
		for _, l := range held {
			if l.Err() != nil {
				res.HoldsLost++
			}
			if err := l.Release(ctx); err != nil && !errors.Is(err, leasehold.ErrLost) {
				errs.add("release held", err)
			}
		}
		held = nil
	}
	defer releaseHeld()

	res.Elapsed, res.Cycles, res.Acquire, res.Release = cycles(ctx, cl, o, &errs)
	res.Refused = cnt.refused.Load()

	holding := time.Since(holdStart)
	releaseHeld()
	res.Renewals = hcnt.renewals.Load()
	res.RenewalsPerSec = perSec(res.Renewals, holding)
	renewTimes, renewFails := hcnt.renewStats()
	res.Renew = Summarize(renewTimes)
	if renewFails > 0 {
		errs.add("renew", fmt.Errorf("%d renewals failed", renewFails))
	}

	if ctx.Err() == nil && o.HandoffRounds > 0 {
		res.Handoff = Summarize(handoffs(ctx, cl, cnt, o, &errs))
	}
	res.Errors, res.FirstError = errs.n.Load(), errs.firstError()
	if err := ctx.Err(); err != nil {
		res.Partial = true
		return res, err
	}
	return res, nil
}

// cycles runs the clients and returns the time they cycled, the cycles
// done, and the acquire and release latencies.
func cycles(ctx context.Context, cl *leasehold.Client, o Options, errs *tally) (time.Duration, int64, Summary, Summary) {
	c := &cycler{ctx: ctx, cl: cl, o: o, errs: errs, start: make(chan struct{})}
	for i := range o.Clients {
		key := o.Prefix + "hot"
		if o.Keys == Distinct {
			key = o.Prefix + "c/" + strconv.Itoa(i)
		}
		c.ready.Add(1)
		c.finished.Add(1)
		go c.client(key)
	}
	c.ready.Wait()
	begin := time.Now()
	c.end = begin.Add(o.Duration)
	close(c.start)
	var stop func()
	if o.Progress != nil {
		stop = ticker(o.ProgressEvery, func() {
			o.Progress(Progress{Store: o.Name, Clients: o.Clients, Phase: "cycles",
				Elapsed: time.Since(begin), Total: o.Duration, Done: c.done.Load(), Errors: errs.n.Load()})
		})
	}
	c.finished.Wait()
	elapsed := time.Since(begin)
	if stop != nil {
		stop()
	}
	return elapsed, c.done.Load(), Summarize(c.acqAll), Summarize(c.relAll)
}

// cycler is the state the clients of one cycles call share.
type cycler struct {
	ctx  context.Context
	cl   *leasehold.Client
	o    Options
	errs *tally

	start    chan struct{} // closed when the clients start cycling
	end      time.Time     // written before start is closed
	ready    sync.WaitGroup
	finished sync.WaitGroup
	done     atomic.Int64

	mu     sync.Mutex
	acqAll []time.Duration
	relAll []time.Duration
}

// client warms up on key, waits for the start, then cycles on key until
// the run ends and adds its latencies to the cycler's.
func (c *cycler) client(key string) {
	defer c.finished.Done()
	var acq, rel []time.Duration
	c.cycle(key, false, nil, nil) // warm up: connections, sessions, caches
	c.ready.Done()
	<-c.start
	for c.ctx.Err() == nil && time.Now().Before(c.end) {
		if c.cycle(key, true, &acq, &rel) {
			c.done.Add(1)
		}
	}
	c.mu.Lock()
	c.acqAll = append(c.acqAll, acq...)
	c.relAll = append(c.relAll, rel...)
	c.mu.Unlock()
}

// cycle acquires and releases key once, and when record is set appends
// the latencies to acq and rel. It reports whether both succeeded.
func (c *cycler) cycle(key string, record bool, acq, rel *[]time.Duration) bool {
	t0 := time.Now()
	// Every acquire runs on a context detached from ctx, so that an
	// interrupt never cuts one short after the store granted it. In
	// Hot mode the client waits for the key until the run's end plus
	// OpTimeout: when the run ends or is interrupted, the clients stop
	// cycling, so each waiter gets the key in turn and releases it at
	// once.
	timeout := c.o.OpTimeout
	opts := leasehold.AcquireOptions{TTL: c.o.TTL}
	if c.o.Keys == Hot {
		opts.Wait = leasehold.WaitForever
		if record {
			timeout += max(time.Until(c.end), 0)
		}
	}
	octx, cancel := opContext(c.ctx, timeout)
	l, err := c.cl.Acquire(octx, key, opts)
	cancel()
	if err != nil {
		c.errs.add("acquire", err)
		sleepCtx(c.ctx, 10*time.Millisecond) // do not spin on a failing store
		return false
	}
	t1 := time.Now()
	err = l.Release(c.ctx)
	t2 := time.Now()
	if err != nil {
		c.errs.add("release", err)
		return false
	}
	if record {
		*acq = append(*acq, t1.Sub(t0))
		*rel = append(*rel, t2.Sub(t1))
	}
	return true
}

// handoffs times o.HandoffRounds hand-offs: a holder takes the key, a
// waiter starts waiting for it, the holder releases after o.HandoffHold,
// and the sample is the time from the Release call to the waiter's Acquire
// returning.
func handoffs(ctx context.Context, cl *leasehold.Client, cnt *counter, o Options, errs *tally) []time.Duration {
	key := o.Prefix + "handoff"
	var samples []time.Duration
	var n atomic.Int64
	begin := time.Now()
	if o.Progress != nil {
		stop := ticker(o.ProgressEvery, func() {
			o.Progress(Progress{Store: o.Name, Clients: o.Clients, Phase: "handoff",
				Elapsed: time.Since(begin), Done: n.Load(), Target: int64(o.HandoffRounds), Errors: errs.n.Load()})
		})
		defer stop()
	}
	for range o.HandoffRounds {
		if ctx.Err() != nil {
			break
		}
		octx, cancel := opContext(ctx, o.OpTimeout)
		h, err := cl.Acquire(octx, key, leasehold.AcquireOptions{TTL: o.TTL})
		cancel()
		if err != nil {
			errs.add("handoff acquire", err)
			break
		}
		type got struct {
			at  time.Time
			l   *leasehold.Lease
			err error
		}
		ch := make(chan got, 1)
		before := cnt.attempts.Load()
		wctx, wcancel := context.WithTimeout(ctx, o.OpTimeout)
		go func() {
			l, err := cl.Acquire(wctx, key, leasehold.AcquireOptions{TTL: o.TTL, Wait: leasehold.WaitForever})
			ch <- got{time.Now(), l, err}
		}()
		// Let the waiter make its first attempt and settle into waiting.
		for cnt.attempts.Load() == before && wctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		sleepCtx(wctx, o.HandoffHold)
		t0 := time.Now()
		if err := h.Release(ctx); err != nil {
			errs.add("handoff release", err)
		}
		g := <-ch
		wcancel()
		if g.err != nil {
			if ctx.Err() == nil {
				errs.add("handoff wait", g.err)
			}
			continue
		}
		samples = append(samples, g.at.Sub(t0))
		n.Add(1)
		if err := g.l.Release(ctx); err != nil {
			errs.add("handoff release", err)
		}
	}
	return samples
}
