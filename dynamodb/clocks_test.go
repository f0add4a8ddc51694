package dynamodb_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/dynamodb"
)

// heldErr checks that err is a HeldError for key with time left, at most
// limit.
func heldErr(t *testing.T, what string, err error, limit time.Duration) *leasehold.HeldError {
	t.Helper()
	var he *leasehold.HeldError
	if !errors.As(err, &he) || he.Remaining <= 0 || he.Remaining > limit {
		t.Fatalf("%s: %v (%+v); want a HeldError with time left, at most %s", what, err, he, limit)
	}
	return he
}

// takeoverAfter acquires key on s until it is granted and checks that the
// grant came no sooner than wait after start.
func takeoverAfter(t *testing.T, s leasehold.Store, key string, start time.Time, wait time.Duration) leasehold.Grant {
	t.Helper()
	for {
		g, err := s.Acquire(ctxT(t), leasehold.AcquireRequest{Key: key, Owner: leasehold.NewOwnerID(), TTL: 15 * time.Second})
		if err == nil {
			if d := time.Since(start); d < wait {
				t.Fatalf("%s taken over %s after the waiter's first read, before the %s it must watch", key, d, wait)
			}
			return g
		}
		if !errors.Is(err, leasehold.ErrHeld) {
			t.Fatalf("waiting for %s: %v", key, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// testClockFree: a store that has not watched a lease for its TTL never
// takes it, however long ago its holder's clock says it ended; once it
// has, it takes it with a newer token.
func testClockFree(t *testing.T, ep string) {
	a, b := open(t, ep, "clocks"), open(t, ep, "clocks")
	if b.MaxSkew() != 0 {
		t.Fatalf("a store without max_skew has skew bound %s", b.MaxSkew())
	}
	g, err := a.Acquire(ctxT(t), leasehold.AcquireRequest{Key: "free", Owner: leasehold.NewOwnerID(), TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // over by every clock
	start := time.Now()
	_, err = b.Acquire(ctxT(t), leasehold.AcquireRequest{Key: "free", Owner: leasehold.NewOwnerID(), TTL: 15 * time.Second})
	heldErr(t, "a lease the waiter has not watched", err, time.Second)
	if g2 := takeoverAfter(t, b, "free", start, time.Second); g2.Token <= g.Token {
		t.Fatalf("token %d after token %d", g2.Token, g.Token)
	}

	// A holder whose wall clock is far behind (its written deadline is
	// in 1970): ignored.
	plant(t, a, heldItem("slowclock", 7, "ttl_ms", "N:1000", "deadline_us", "N:0"))
	start = time.Now()
	_, err = b.Acquire(ctxT(t), leasehold.AcquireRequest{Key: "slowclock", Owner: leasehold.NewOwnerID(), TTL: 15 * time.Second})
	heldErr(t, "a lease whose holder's clock is behind", err, time.Second)
	if _, err := b.Holder(ctxT(t), "slowclock"); err != nil {
		t.Fatalf("Holder of a lease the store has watched for less than its TTL: %v", err)
	}
	if g2 := takeoverAfter(t, b, "slowclock", start, time.Second); g2.Token <= 7 {
		t.Fatalf("token %d after token 7", g2.Token)
	}
}

// testBoundedSkew: with max_skew, a lease whose written deadline plus the
// bound has passed is taken at the first read; one whose deadline is ahead
// is held until then; and one whose deadline is absurdly far ahead is
// still taken once watched for its TTL.
func testBoundedSkew(t *testing.T, ep string) {
	s := open(t, ep, "clocks", "&max_skew=200ms")
	if s.MaxSkew() != 200*time.Millisecond {
		t.Fatalf("skew bound %s, want 200ms", s.MaxSkew())
	}
	past := fmt.Sprint("N:", time.Now().Add(-time.Second).UnixMicro())
	plant(t, s, heldItem("past", 7, "deadline_us", past))
	if g, err := s.Acquire(ctxT(t), leasehold.AcquireRequest{Key: "past", Owner: leasehold.NewOwnerID(), TTL: 15 * time.Second}); err != nil || g.Token <= 7 {
		t.Fatalf("a lease whose deadline passed a second ago: %+v, %v; want it taken with a newer token", g, err)
	}
	ahead := fmt.Sprint("N:", time.Now().Add(10*time.Second).UnixMicro())
	plant(t, s, heldItem("ahead", 7, "deadline_us", ahead))
	_, err := s.Acquire(ctxT(t), leasehold.AcquireRequest{Key: "ahead", Owner: leasehold.NewOwnerID(), TTL: 15 * time.Second})
	heldErr(t, "a lease whose deadline is 10 s ahead", err, 10*time.Second+200*time.Millisecond)

	far := fmt.Sprint("N:", time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro())
	plant(t, s, heldItem("far", 7, "deadline_us", far, "ttl_ms", "N:1000"))
	start := time.Now()
	_, err = s.Acquire(ctxT(t), leasehold.AcquireRequest{Key: "far", Owner: leasehold.NewOwnerID(), TTL: 15 * time.Second})
	heldErr(t, "a lease whose deadline is in the year 3000", err, time.Second)
	takeoverAfter(t, s, "far", start, time.Second)

	if info := s.Info(); info.Name != dynamodb.Name || !info.SafeTokens {
		t.Fatalf("Info %+v", info)
	}
}

// testDeleted deletes a key's item (someone else's doing): after a
// release, the next token is still newer; while held, the key is free
// again, and the old holder's renew and release are refused.
func testDeleted(t *testing.T, ep string) {
	s := open(t, ep, "clocks")
	g1 := acquire(t, s, "deleted")
	release(t, s, g1)
	del(t, s, "deleted")
	g2 := acquire(t, s, "deleted")
	if g2.Token <= g1.Token {
		t.Fatalf("after the item was deleted: token %d, earlier %d", g2.Token, g1.Token)
	}
	del(t, s, "deleted")
	g3 := acquire(t, s, "deleted")
	if g3.Token <= g2.Token {
		t.Fatalf("after a held item was deleted: token %d, earlier %d", g3.Token, g2.Token)
	}
	if _, err := s.Renew(ctxT(t), g2); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("renew of the deleted grant: %v, want ErrNotHeld", err)
	}
	if err := s.Release(ctxT(t), g2); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("release of the deleted grant: %v, want ErrNotHeld", err)
	}
	if h, err := s.Holder(ctxT(t), "deleted"); err != nil || h.Token != g3.Token {
		t.Fatalf("Holder %+v, %v; want token %d", h, err, g3.Token)
	}
}
