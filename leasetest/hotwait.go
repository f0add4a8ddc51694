package leasetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

// The hot-key waiting check: hotWaiters clients over their own handles,
// hotRounds rounds.
const (
	hotWaiters = 3
	hotRounds  = 12
	// hotRenewFraction is the clients' RenewFraction: renewals every 20th
	// of the TTL, so that holding across one costs little.
	hotRenewFraction = 0.05
)

// hotKeyWaiters checks rule 13 on a hot key (see hotKeyWaitersOnce).
// See docs/design.md#waiting.
func (s *suite) hotKeyWaiters(t *testing.T) {
	s.attempts(t, s.hotKeyWaitersOnce)
}

// hotKeyWaitersOnce has several clients, each over its own handle, contend
// for one key with waiting acquires (Wait > 0) through the Client, round
// after round: all start together, so one finds the key free and the others
// queue behind it; each holds the key until a renewal has been answered,
// then releases it. A waiter granted the key must not be told it lost it:
//
//   - a waiting acquire that returns a *LostError (the store refused the
//     renewal that anchors a waiter's deadline) fails the test if the whole
//     call took less than the TTL, because the grant was made during the
//     call and so was still within its TTL when the store refused it;
//   - a lease that ends before the holder's deadline fails the test (as in
//     the renewal check);
//   - two clients holding the key at once, each before its deadline, fail it.
//
// An attempt is inconclusive when the machine or the store was too slow for
// the TTL: an acquire that lost its grant after a call longer than the TTL, a
// lease that ended after its deadline passed without an answered renewal
// (timeouts or store failures only; a renewal refused or failed any other
// way fails the test), a wait that ran out, or a store failure.
func (s *suite) hotKeyWaitersOnce(t *testing.T) string {
	k := key(t, "hot")
	ws := make([]*hotWaiter, hotWaiters)
	for i := range ws {
		w := &hotWaiter{s: s, k: k}
		w.c = s.client(t, s.open(t), &leasehold.Options{RenewFraction: hotRenewFraction, OnJeopardy: w.jeopardy})
		ws[i] = w
	}
	var cur holderCell
	for round := range hotRounds {
		type outcome struct{ violation, inconclusive string }
		out := make([]outcome, len(ws))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, w := range ws {
			wg.Go(func() {
				<-start
				out[i].violation, out[i].inconclusive = w.cycle(&cur)
			})
		}
		close(start)
		wg.Wait()
		var why []string
		for i, o := range out {
			if o.violation != "" {
				t.Fatalf("round %d, client %d: %s", round+1, i+1, o.violation)
			}
			if o.inconclusive != "" {
				why = append(why, fmt.Sprintf("client %d: %s", i+1, o.inconclusive))
			}
		}
		if len(why) > 0 {
			return fmt.Sprintf("round %d: %v", round+1, why)
		}
	}
	return ""
}

// hotWaiter is one client of the hot-key check.
type hotWaiter struct {
	s *suite
	k string
	c *leasehold.Client

	mu       sync.Mutex
	renewErr map[uint64][]error // failed renewals by token
}

func (w *hotWaiter) jeopardy(j leasehold.Jeopardy) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.renewErr == nil {
		w.renewErr = make(map[uint64][]error)
	}
	w.renewErr[j.Token] = append(w.renewErr[j.Token], j.Err)
}

// holderCell is the lease the check last saw granted.
type holderCell struct {
	mu sync.Mutex
	l  *leasehold.Lease
}

// claim records l as the holder, and reports the previous holder if it
// still held the key: not ended, and before its deadline.
func (h *holderCell) claim(l *leasehold.Lease) (overlap *leasehold.Lease) {
	h.mu.Lock()
	defer h.mu.Unlock()
	prev := h.l
	h.l = l
	if prev != nil && prev.Err() == nil && time.Now().Before(prev.Deadline()) {
		return prev
	}
	return nil
}

// cycle acquires the hot key with a wait, holds it until a renewal has been
// answered, and releases it. It returns a violation, or why the cycle was
// inconclusive, or neither.
func (w *hotWaiter) cycle(cur *holderCell) (violation, inconclusive string) {
	s := w.s
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Enough for the others' holds, with room for a loaded machine; a
	// holder that stalls past its TTL makes the wait inconclusive at worst.
	wait := hotWaiters*10*s.ttl + 10*time.Second
	began := time.Now()
	l, err := w.c.Acquire(ctx, w.k, leasehold.AcquireOptions{TTL: s.ttl, Wait: wait})
	took := time.Since(began)
	switch {
	case err == nil:
	case errors.Is(err, leasehold.ErrLost):
		// Granted during the call, then refused: within the TTL unless
		// the call itself outlasted it. A tenth is left for clock rate.
		if took < s.ttl*9/10 {
			return fmt.Sprintf("a waiting acquire that took %s (the TTL is %s) was told it lost the key it had just been granted: %v", took.Round(time.Millisecond), s.ttl, err), ""
		}
		return "", fmt.Sprintf("a waiting acquire lost its grant after a call of %s, longer than the TTL: %v", took.Round(time.Millisecond), err)
	case errors.Is(err, leasehold.ErrHeld):
		return "", fmt.Sprintf("the wait of %s ran out: %v", wait, err)
	case errors.Is(err, leasehold.ErrStore) || isTimeout(err):
		return "", fmt.Sprintf("acquire: %v", err)
	default:
		return fmt.Sprintf("waiting acquire: %v", err), ""
	}
	if prev := cur.claim(l); prev != nil {
		if l.Err() != nil || !time.Now().Before(l.Deadline()) {
			// This goroutine stalled past its own deadline between the
			// grant and the claim: the two were never valid together.
			_ = l.Release(ctx)
			return "", fmt.Sprintf("the holder of token %d stalled past its deadline before it could be checked", l.Token())
		}
		v := fmt.Sprintf("granted token %d while token %d was held, %s before its holder's deadline", l.Token(), prev.Token(), time.Until(prev.Deadline()).Round(time.Millisecond))
		_ = l.Release(ctx)
		return v, ""
	}
	// Hold until the deadline moves: a renewal was answered.
	first := l.Deadline()
	for !l.Deadline().After(first) {
		select {
		case <-l.Done():
			return w.ended(l)
		case <-time.After(s.ttl / 50):
		}
	}
	if err := l.Release(ctx); err != nil {
		if errors.Is(err, leasehold.ErrLost) {
			return w.ended(l)
		}
		if errors.Is(err, leasehold.ErrStore) || isTimeout(err) {
			return "", fmt.Sprintf("release: %v", err)
		}
		return fmt.Sprintf("release: %v", err), ""
	}
	return "", ""
}

// ended judges a lease that ended while it was held.
func (w *hotWaiter) ended(l *leasehold.Lease) (violation, inconclusive string) {
	seen := time.Now()
	if seen.Before(l.Deadline()) {
		return fmt.Sprintf("lease (token %d) ended %s before the holder's deadline: %v", l.Token(), l.Deadline().Sub(seen).Round(time.Millisecond), l.Err()), ""
	}
	w.mu.Lock()
	errs := slices.Clone(w.renewErr[l.Token()])
	w.mu.Unlock()
	for _, err := range errs {
		if !isTimeout(err) && !errors.Is(err, leasehold.ErrStore) {
			return fmt.Sprintf("a renewal of token %d failed: %v (lease: %v)", l.Token(), err, l.Err()), ""
		}
	}
	return "", fmt.Sprintf("lease (token %d) ended after its deadline passed without an answered renewal (%d renewals timed out or met a store failure: %v): %v",
		l.Token(), len(errs), errors.Join(errs...), l.Err())
}
