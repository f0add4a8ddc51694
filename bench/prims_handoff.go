package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/semaphore"
)

// semHandoffs is the state of the hand-off measurement: o.Contenders clients
// cycle on one semaphore, each holding a slot for o.Hold, so that the
// others wait while every slot is held.
type semHandoffs struct {
	p    *prims
	sem  *semaphore.Semaphore
	cnt  *counter
	key  string
	hctx context.Context // ends when enough hand-offs were timed
	stop context.CancelFunc

	started  atomic.Int64 // contenders that have begun their first acquire
	counting atomic.Bool

	mu        sync.Mutex
	releasing []bool      // per slot: its holder's Release has not returned yet
	early     []bool      // per slot: granted again before that Release returned
	released  []time.Time // per slot: when its last Release returned; zero once paired
	samples   []time.Duration
	attempts0 int64
}

// handoff measures the hand-off latency and fills in res.
func (p *prims) handoff(s leasehold.Store, res *PrimResult) {
	o := p.o
	cs, cnt := count(s)
	cl, err := leasehold.New(cs, &leasehold.Options{TTL: o.TTL, Label: Label, ReleaseTimeout: o.OpTimeout})
	if err != nil {
		p.errs.add("handoff", err)
		return
	}
	defer cl.Close()
	sem, err := semaphore.New(cl, o.Slots, &semaphore.Options{AllowUnsafeTokens: true})
	if err != nil {
		p.errs.add("handoff", err)
		return
	}
	h := &semHandoffs{p: p, sem: sem, cnt: cnt, key: o.Prefix + "sem-handoff",
		releasing: make([]bool, o.Slots), early: make([]bool, o.Slots), released: make([]time.Time, o.Slots)}
	h.hctx, h.stop = context.WithTimeout(p.ctx, o.MaxDuration)
	defer h.stop()
	var wg sync.WaitGroup
	for range o.Contenders {
		wg.Go(h.contender)
	}
	// Time hand-offs once every contender is in, and the first holders'
	// slots have been handed on at least once.
	for h.started.Load() < int64(o.Contenders) && h.hctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	sleepCtx(h.hctx, 2*o.Hold)
	h.mu.Lock()
	h.attempts0 = cnt.attempts.Load()
	clear(h.released)
	h.counting.Store(true)
	h.mu.Unlock()
	<-h.hctx.Done()
	h.counting.Store(false)
	wg.Wait()

	h.mu.Lock()
	defer h.mu.Unlock()
	res.Handoff = Summarize(h.samples)
	if n := len(h.samples); n > 0 {
		res.AttemptsPerHandoff = float64(cnt.attempts.Load()-h.attempts0) / float64(n)
	}
	if n := int64(len(h.samples)); n < int64(o.Handoffs) && p.ctx.Err() == nil {
		p.errs.add("handoff", fmt.Errorf("only %d of %d hand-offs within %s", n, o.Handoffs, o.MaxDuration))
	}
}

// contender takes a slot, waiting, holds it and releases it, until the
// measurement ends.
func (h *semHandoffs) contender() {
	o := h.p.o
	first := true
	for h.hctx.Err() == nil {
		if first {
			h.started.Add(1)
			first = false
		}
		pm, err := h.sem.Acquire(h.hctx, h.key, leasehold.AcquireOptions{TTL: o.TTL, Wait: leasehold.WaitForever})
		if err != nil {
			if h.hctx.Err() == nil || !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				h.p.errs.add("handoff acquire", err)
				sleepCtx(h.hctx, 10*time.Millisecond)
			}
			continue
		}
		h.granted(pm.Slot(), time.Now())
		sleepCtx(h.hctx, o.Hold)
		h.release(pm)
	}
}

// granted notes a grant of slot at t: a hand-off from the slot's last
// release.
func (h *semHandoffs) granted(slot int, at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.releasing[slot]:
		h.early[slot] = true // timed as 0 when that Release returns
	case !h.released[slot].IsZero():
		h.sample(at.Sub(h.released[slot]))
		h.released[slot] = time.Time{}
	}
}

// release releases pm and notes when its Release returned.
func (h *semHandoffs) release(pm *semaphore.Permit) {
	slot := pm.Slot()
	h.mu.Lock()
	h.releasing[slot] = true
	h.mu.Unlock()
	rctx, cancel := opContext(h.p.ctx, h.p.o.OpTimeout)
	err := pm.Release(rctx)
	cancel()
	if err != nil {
		h.p.errs.add("handoff release", err)
	}
	at := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.releasing[slot] = false
	if h.early[slot] {
		h.early[slot] = false
		h.sample(0)
		return
	}
	h.released[slot] = at
}

// sample records one hand-off while counting (h.mu held), and ends the
// measurement when there are enough.
func (h *semHandoffs) sample(d time.Duration) {
	if !h.counting.Load() {
		return
	}
	h.samples = append(h.samples, max(d, 0))
	if len(h.samples) >= h.p.o.Handoffs {
		h.counting.Store(false)
		h.stop()
	}
}
