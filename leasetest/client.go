package leasetest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

// waitDone waits up to limit for ch to close.
func waitDone(t *testing.T, ch <-chan struct{}, limit time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(limit):
		t.Fatalf("%s did not happen within %s", what, limit)
	}
}

// clientRenews checks rules 8 and 9 (see clientRenewsOnce).
// See docs/design.md#the-timing-model.
func (s *suite) clientRenews(t *testing.T) {
	s.attempts(t, s.clientRenewsOnce)
}

// clientRenewsOnce holds a short lease through a Client for 4 TTLs, which
// only renewal can do, probing the key from another owner meanwhile. It
// judges by the holder's deadline (the last successful renewal's send time
// plus the TTL less the drift margin), which always ends before the store's
// expiry: a refusal or another owner's grant seen before that deadline is a
// violation whatever the machine did. An attempt is inconclusive when the
// deadline passed first, because the renewals were not answered in time
// (timeouts or store failures on a starved machine); a renewal that failed
// any other way fails the test.
func (s *suite) clientRenewsOnce(t *testing.T) string {
	st := s.open(t)
	var mu sync.Mutex
	var renewErrs []error
	c := s.client(t, st, &leasehold.Options{OnJeopardy: func(j leasehold.Jeopardy) {
		mu.Lock()
		defer mu.Unlock()
		renewErrs = append(renewErrs, j.Err)
	}})
	k := key(t, "k")
	l, err := c.Acquire(ctxT(t), k, leasehold.AcquireOptions{TTL: s.ttl})
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	// ended judges a lease that ended while it should have been renewed.
	ended := func() string {
		seen := time.Now()
		if seen.Before(l.Deadline()) {
			t.Fatalf("lease ended %s before the holder's deadline: %v", l.Deadline().Sub(seen).Round(time.Millisecond), l.Err())
		}
		mu.Lock()
		errs := slices.Clone(renewErrs)
		mu.Unlock()
		for _, err := range errs {
			if !isTimeout(err) && !errors.Is(err, leasehold.ErrStore) {
				t.Fatalf("a renewal failed: %v (lease: %v)", err, l.Err())
			}
		}
		return fmt.Sprintf("the lease ended after its deadline passed without an answered renewal (%d renewals timed out or met a store failure: %v): %v", len(errs), errors.Join(errs...), l.Err())
	}
	// Hold for 4 TTLs: only renewal can keep it.
	end := time.Now().Add(4 * s.ttl)
	for time.Now().Before(end) {
		select {
		case <-l.Done():
			return ended()
		case <-time.After(s.ttl / 5):
		}
		if other := probeHeld(t, st, k, s.ttl, "another owner's acquire while renewed"); other != nil {
			left := time.Until(l.Deadline())
			_ = st.Release(ctxT(t), *other)
			if left > 0 {
				t.Fatalf("another owner acquired the key %s before the holder's deadline (lease: %v)", left.Round(time.Millisecond), l.Err())
			}
			return "another owner acquired the key after the holder's deadline passed"
		}
	}
	select {
	case <-l.Done():
		return ended()
	default:
	}
	if l.Remaining() <= 0 {
		t.Errorf("Remaining = %s while held", l.Remaining())
	}
	if err := l.Checkpoint(0); err != nil {
		t.Errorf("Checkpoint(0) while held: %v", err)
	}
	if err := l.Checkpoint(time.Hour); !errors.Is(err, leasehold.ErrInsufficientTime) {
		t.Errorf("Checkpoint(1h) with a %s TTL: got %v, want ErrInsufficientTime", s.ttl, err)
	}
	if err := l.Release(ctxT(t)); err != nil {
		t.Fatalf("release: %v", err)
	}
	if !errors.Is(l.Err(), leasehold.ErrReleased) {
		t.Errorf("cause after release = %v, want ErrReleased", l.Err())
	}
	if _, err := st.Holder(ctxT(t), k); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("Holder after release: got %v, want ErrNotHeld", err)
	}
	return ""
}

// isTimeout reports whether err is a renewal that ran out of time: the
// client's per-renewal deadline, or a network timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout())
}

// refusalCancels checks rule 10: when the grant is deleted and taken
// behind the holder's back, the lease's context ends with a *LostError,
// and the lost holder's release does not touch the new holder.
// See docs/design.md#the-timing-model.
func (s *suite) refusalCancels(t *testing.T) {
	st := s.open(t)
	c := s.client(t, st, nil)
	k := key(t, "k")
	l, err := c.Acquire(ctxT(t), k, leasehold.AcquireOptions{TTL: s.ttl})
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	// Someone deletes the grant behind the holder's back and takes the key:
	// the next renewal is refused and must end the lease at once.
	if err := st.Release(ctxT(t), l.Grant()); err != nil {
		t.Fatalf("release behind the holder's back: %v", err)
	}
	other, err := st.Acquire(ctxT(t), req(k, 30*time.Second))
	if err != nil {
		t.Fatalf("takeover: %v", err)
	}
	defer st.Release(ctxT(t), other)
	waitDone(t, l.Done(), 2*s.ttl+5*time.Second, "cancellation of the lease's context")
	cause := l.Err()
	var lost *leasehold.LostError
	if !errors.As(cause, &lost) || !errors.Is(cause, leasehold.ErrLost) {
		t.Fatalf("cause = %v, want a *LostError", cause)
	}
	if !errors.Is(cause, leasehold.ErrNotHeld) && !errors.Is(cause, leasehold.ErrExpired) {
		t.Errorf("cause = %v, want it to wrap ErrNotHeld or ErrExpired", cause)
	}
	if err := l.Checkpoint(0); !errors.Is(err, leasehold.ErrLost) {
		t.Errorf("Checkpoint after loss: got %v, want ErrLost", err)
	}
	if err := l.Release(ctxT(t)); !errors.Is(err, leasehold.ErrLost) {
		t.Errorf("Release after loss: got %v, want the loss", err)
	}
	if h, err := st.Holder(ctxT(t), k); err != nil || h.Token != other.Token {
		t.Errorf("the lost holder's release touched the new holder: Holder = %+v, %v", h, err)
	}
}

// releaseCancelled checks rules 3 and 10: cancelling the acquire's context
// does not end the lease, and a release on that cancelled context still
// frees the key, because it runs on a detached context.
// See docs/design.md#the-timing-model.
func (s *suite) releaseCancelled(t *testing.T) {
	st := s.open(t)
	c := s.client(t, st, nil)
	k := key(t, "k")
	ctx, cancel := context.WithCancel(context.Background())
	l, err := c.Acquire(ctx, k, leasehold.AcquireOptions{TTL: 30 * time.Second})
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	cancel()
	select {
	case <-l.Done():
		t.Fatalf("cancelling the acquire's context ended the lease: %v", l.Err())
	default:
	}
	if err := l.Release(ctx); err != nil {
		t.Fatalf("release on a cancelled context: %v", err)
	}
	if _, err := st.Holder(ctxT(t), k); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("key still held after a release on a cancelled context: %v", err)
	}
}

// doPanics checks rule 10 for Client.Do: a panic in the work releases the
// lease and is re-raised, and the key is held while the work runs.
// See docs/design.md#the-timing-model.
func (s *suite) doPanics(t *testing.T) {
	st := s.open(t)
	c := s.client(t, st, nil)
	k := key(t, "k")
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want the panic re-raised", r)
			}
		}()
		_ = c.Do(ctxT(t), k, leasehold.AcquireOptions{TTL: 30 * time.Second}, func(ctx context.Context, l *leasehold.Lease) error {
			panic("boom")
		})
	}()
	if _, err := st.Holder(ctxT(t), k); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("key still held after Do panicked: %v", err)
	}
	ran := false
	err := c.Do(ctxT(t), k, leasehold.AcquireOptions{TTL: 30 * time.Second}, func(ctx context.Context, l *leasehold.Lease) error {
		ran = true
		if _, err := st.Acquire(ctx, req(k, time.Minute)); !errors.Is(err, leasehold.ErrHeld) {
			t.Errorf("acquire by another inside Do: got %v, want ErrHeld", err)
		}
		return nil
	})
	if err != nil || !ran {
		t.Fatalf("Do = %v, ran %v", err, ran)
	}
}

// waiterWakes checks rule 13: a waiting acquire gets the key soon after
// its holder releases it.
// See docs/design.md#waiting.
func (s *suite) waiterWakes(t *testing.T) {
	st := s.open(t)
	c := s.client(t, st, nil)
	k := key(t, "k")
	holder, err := c.Acquire(ctxT(t), k, leasehold.AcquireOptions{TTL: 30 * time.Second})
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	got := make(chan *leasehold.Lease, 1)
	errc := make(chan error, 1)
	go func() {
		l, err := c.Acquire(ctxT(t), k, leasehold.AcquireOptions{TTL: 30 * time.Second, Wait: 30 * time.Second})
		if err != nil {
			errc <- err
			return
		}
		got <- l
	}()
	time.Sleep(100 * time.Millisecond)
	if err := holder.Release(ctxT(t)); err != nil {
		t.Fatalf("release: %v", err)
	}
	select {
	case l := <-got:
		if l.Token() <= holder.Token() {
			t.Errorf("waiter's token %d not greater than %d", l.Token(), holder.Token())
		}
		_ = l.Release(ctxT(t))
	case err := <-errc:
		t.Fatalf("waiter: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("waiter did not get the key within 20s of its release")
	}
}

// waiterGivesUp checks rule 14: a wait that runs out returns a
// *HeldError, told apart from cancellation and from a store failure.
// See docs/design.md#waiting.
func (s *suite) waiterGivesUp(t *testing.T) {
	st := s.open(t)
	c := s.client(t, st, nil)
	k := key(t, "k")
	holder, err := c.Acquire(ctxT(t), k, leasehold.AcquireOptions{TTL: 30 * time.Second})
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	defer holder.Release(ctxT(t))
	_, err = c.Acquire(ctxT(t), k, leasehold.AcquireOptions{TTL: 30 * time.Second, Wait: 300 * time.Millisecond})
	if !errors.Is(err, leasehold.ErrHeld) {
		t.Fatalf("waiter that ran out of wait: got %v, want ErrHeld", err)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, leasehold.ErrStore) {
		t.Errorf("giving up must be told apart from cancellation and store failure: %v", err)
	}
}
