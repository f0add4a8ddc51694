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

	key := o.Prefix + "herd"
	var (
		errs      tally
		mu        sync.Mutex
		samples   []time.Duration
		lastRel   time.Time // start of the last Release call; zero before the first
		releases  atomic.Int64
		attempts0 int64 // attempts counted when the first release starts
		wg        sync.WaitGroup
	)
	hctx, cancel := context.WithTimeout(ctx, o.MaxDuration)
	defer cancel()
	begin := time.Now()

	// The first holder takes the key before the waiters start.
	octx, ocancel := opContext(ctx, o.OpTimeout)
	first, err := cl.Acquire(octx, key, leasehold.AcquireOptions{TTL: o.TTL})
	ocancel()
	if err != nil {
		errs.add("acquire", err)
		res.Errors, res.FirstError = errs.n.Load(), errs.firstError()
		return res, nil
	}

	// hold keeps l for o.Hold, then releases it and notes the time.
	hold := func(l *leasehold.Lease) {
		sleepCtx(hctx, o.Hold)
		mu.Lock()
		if lastRel.IsZero() {
			attempts0 = cnt.attempts.Load()
		}
		lastRel = time.Now()
		mu.Unlock()
		if err := l.Release(ctx); err != nil {
			errs.add("release", err)
		}
	}
	participant := func() {
		defer wg.Done()
		for hctx.Err() == nil {
			// The wait is detached from hctx: when the measurement ends,
			// every waiter still gets the key in turn and releases it at
			// once, so no grant is left that the client never saw.
			wctx, wcancel := opContext(ctx, o.MaxDuration+o.OpTimeout)
			l, err := cl.Acquire(wctx, key, leasehold.AcquireOptions{TTL: o.TTL, Wait: leasehold.WaitForever})
			wcancel()
			if err != nil {
				errs.add("acquire", err)
				sleepCtx(hctx, 10*time.Millisecond)
				continue
			}
			at := time.Now()
			mu.Lock()
			if !lastRel.IsZero() && hctx.Err() == nil {
				samples = append(samples, at.Sub(lastRel))
				if releases.Add(1) >= int64(o.Releases) {
					cancel()
				}
			}
			mu.Unlock()
			hold(l)
		}
	}
	// Start the waiters one by one, each once its first attempt is made,
	// so that all of them are waiting when the first holder releases.
	for range o.Waiters {
		wg.Add(1)
		before := cnt.attempts.Load()
		go participant()
		for cnt.attempts.Load() == before && hctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
	}
	if o.Progress != nil {
		stop := ticker(o.ProgressEvery, func() {
			o.Progress(Progress{Store: o.Name, Clients: o.Waiters, Phase: "herd", Elapsed: time.Since(begin),
				Done: releases.Load(), Target: int64(o.Releases), Errors: errs.n.Load()})
		})
		defer stop()
	}
	wg.Add(1)
	go func() {
		hold(first)
		participant()
	}()
	wg.Wait()
	res.Elapsed = time.Since(begin)

	mu.Lock()
	res.Releases = releases.Load()
	if !lastRel.IsZero() {
		res.Attempts = cnt.attempts.Load() - attempts0
	}
	res.Handoff = Summarize(samples)
	mu.Unlock()
	if res.Releases > 0 {
		res.WakeupsPerRelease = float64(res.Attempts) / float64(res.Releases)
	}
	res.Errors, res.FirstError = errs.n.Load(), errs.firstError()
	if err := ctx.Err(); err != nil {
		res.Partial = true
		return res, err
	}
	if res.Releases < int64(o.Releases) && errors.Is(hctx.Err(), context.DeadlineExceeded) {
		errs.add("herd", fmt.Errorf("only %d of %d hand-offs within %s", res.Releases, o.Releases, o.MaxDuration))
		res.Errors, res.FirstError = errs.n.Load(), errs.firstError()
	}
	return res, nil
}
