package rwlock

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold-go/leasehold"
)

// waiting is the budget of one RLock or Lock call.
type waiting struct {
	c        *leasehold.Client
	wait     time.Duration
	deadline time.Time // zero when wait is 0 or WaitForever
}

func newWaiting(c *leasehold.Client, wait time.Duration) (*waiting, error) {
	if wait < 0 {
		return nil, fmt.Errorf("%w: wait %s is negative", leasehold.ErrInvalidWait, wait)
	}
	w := &waiting{c: c, wait: wait}
	if wait > 0 && wait != leasehold.WaitForever {
		w.deadline = c.Options().Clock.Now().Add(wait)
	}
	return w, nil
}

// left is the wait still to spend, for an acquire's Wait: 0 tries once.
func (w *waiting) left() time.Duration {
	if w.deadline.IsZero() {
		return w.wait
	}
	return max(w.deadline.Sub(w.c.Options().Clock.Now()), 0)
}

// pause sleeps before attempt+1: the client's backoff, capped at a third
// of ttl and at the wait left. It returns false when the wait is over, ctx
// ended, or lost fired.
func (w *waiting) pause(ctx context.Context, lost <-chan struct{}, attempt int, ttl time.Duration) bool {
	if w.wait == 0 {
		return false
	}
	d := min(w.c.Options().Backoff.Delay(attempt), max(ttl/3, time.Millisecond))
	if !w.deadline.IsZero() {
		left := w.left()
		if left <= 0 {
			return false
		}
		d = min(d, left)
	}
	t := w.c.Options().Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-lost:
		return false
	case <-t.C():
		return ctx.Err() == nil && (w.deadline.IsZero() || w.left() > 0)
	}
}

// ended is the error of a wait that is over: ctx's error when ctx ended,
// else last (the last *leasehold.HeldError or store failure).
func (w *waiting) ended(ctx context.Context, last error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return last
}
