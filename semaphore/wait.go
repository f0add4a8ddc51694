package semaphore

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/leasehold-go/leasehold"
)

// errWaitOver is the cause of a waiting Acquire's context when its Wait ran
// out (as opposed to the caller's context ending).
var errWaitOver = errors.New("semaphore: wait ran out")

// wait tries slots until one is granted or the wait runs out. It begins
// with a round of every slot; between rounds it pauses for a backoff delay
// or until a slot's key is announced free. After an announcement it tries
// only the slots announced since the last round (the others were held then,
// and their release would have been announced too); after the delay,
// every slot (an announcement may be lost, and an expiry is not
// announced on every store).
func (s *Semaphore) wait(ctx context.Context, key string, try leasehold.AcquireOptions, wait time.Duration) (*Permit, error) {
	wctx := ctx
	if wait != leasehold.WaitForever {
		var stop context.CancelFunc
		wctx, stop = context.WithTimeoutCause(ctx, wait, errWaitOver)
		defer stop()
	}
	keys, err := slotKeys(key, s.n)
	if err != nil {
		return nil, err
	}
	ws, unsubscribe, err := s.subscribe(wctx, keys)
	if err != nil {
		return nil, err
	}
	defer unsubscribe()
	ttl := try.TTL
	if ttl == 0 {
		ttl = s.c.Options().TTL
	}
	woken := false
	for attempt := 1; ; attempt++ {
		var p *Permit
		var full *FullError
		var err error
		if slots := ws.take(); woken && len(slots) > 0 {
			p, full, err = s.trySome(wctx, key, slots, try)
		} else {
			p, full, err = s.tryAll(wctx, key, try)
		}
		if err == nil {
			return p, nil
		}
		if !retryable(err) {
			if wctx.Err() != nil && ctx.Err() == nil && context.Cause(wctx) == errWaitOver {
				return s.lastTry(ctx, key, try, err)
			}
			return p, err
		}
		var ok bool
		if ok, woken = s.pause(wctx, s.delay(attempt, ttl, full), ws.ch); !ok {
			if ctx.Err() == nil && context.Cause(wctx) == errWaitOver {
				return s.lastTry(ctx, key, try, err)
			}
			return nil, ctx.Err()
		}
	}
}

// lastTry is the one try after the wait ran out (unless the interrupted
// attempt had an answer of its own: then that is the result).
func (s *Semaphore) lastTry(ctx context.Context, key string, try leasehold.AcquireOptions, last error) (*Permit, error) {
	if last != nil && !errors.Is(last, context.Canceled) && !errors.Is(last, context.DeadlineExceeded) && !retryable(last) {
		return nil, last
	}
	p, _, err := s.tryAll(ctx, key, try)
	return p, err
}

// delay is the pause before the next round: the client's backoff, capped
// at a third of the TTL, and no longer than the soonest a holder's lease
// ends by the store's clock (plus a little jitter).
func (s *Semaphore) delay(attempt int, ttl time.Duration, full *FullError) time.Duration {
	d := min(s.c.Options().Backoff.Delay(attempt), max(ttl/3, time.Millisecond))
	if full != nil {
		for _, h := range full.Held {
			if h != nil && h.Remaining > 0 && h.Remaining < d {
				d = h.Remaining + time.Duration(rand.Int64N(int64(time.Millisecond))+1)
			}
		}
	}
	return d
}

// pause waits d, or until wake fires. It reports false when ctx ended
// first, and whether wake fired.
func (s *Semaphore) pause(ctx context.Context, d time.Duration, wake <-chan struct{}) (ok, woken bool) {
	t := s.c.Options().Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false, false
	case <-wake:
		return true, true
	case <-t.C():
		return true, false
	}
}

// wakeSet collects the slots announced free since it was last taken, and
// signals on ch (coalesced) when one is.
type wakeSet struct {
	ch    chan struct{}
	mu    sync.Mutex
	slots []int
	in    []bool // by slot: in slots
}

// add notes slot i announced free.
func (w *wakeSet) add(i int) {
	w.mu.Lock()
	if !w.in[i] {
		w.in[i] = true
		w.slots = append(w.slots, i)
	}
	w.mu.Unlock()
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// take returns the slots announced since the last take, and forgets them.
func (w *wakeSet) take() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.slots
	w.slots = nil
	for _, i := range out {
		w.in[i] = false
	}
	return out
}

// subscribe subscribes to every slot's key on a store that notifies
// (leasehold.Notifier), collecting the slots announced in one wakeSet. On
// other stores the set is never signalled and the wait polls.
func (s *Semaphore) subscribe(ctx context.Context, keys []string) (*wakeSet, func(), error) {
	ws := &wakeSet{ch: make(chan struct{}, 1), in: make([]bool, len(keys))}
	n, ok := s.c.Store().(leasehold.Notifier)
	if !ok {
		return ws, func() {}, nil
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var ends []func()
	end := func() {
		close(done)
		for _, f := range ends {
			f()
		}
		wg.Wait()
	}
	for i, k := range keys {
		ch, unsubscribe, err := n.Subscribe(ctx, k)
		if err != nil {
			end()
			return nil, nil, err
		}
		ends = append(ends, unsubscribe)
		wg.Go(func() { forward(ch, i, ws, done) })
	}
	return ws, end, nil
}

// forward notes slot i in ws for each value from ch, until done.
func forward(ch <-chan struct{}, i int, ws *wakeSet, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case _, ok := <-ch:
			if !ok {
				return
			}
			ws.add(i)
		}
	}
}
