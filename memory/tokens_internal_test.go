package memory

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

// A key whose counter reached 2^64-1 (planted here: the memory store has
// no server to plant it in) is refused with ErrTokensExhausted and left
// free, never granted a wrapped token of 0; other keys are unaffected, and
// the key below the limit gets the last token once.
func TestTokensExhausted(t *testing.T) {
	ctx := context.Background()
	s := New(nil)
	defer s.Close()
	req := func(key string) leasehold.AcquireRequest {
		return leasehold.AcquireRequest{Key: key, Owner: leasehold.NewOwnerID(), TTL: time.Minute}
	}
	s.tokens["full"] = math.MaxUint64
	s.tokens["last"] = math.MaxUint64 - 1
	for range 2 {
		g, err := s.Acquire(ctx, req("full"))
		var se *leasehold.StoreError
		if err == nil || !errors.As(err, &se) || !errors.Is(err, leasehold.ErrTokensExhausted) || !strings.Contains(err.Error(), `"full"`) {
			t.Fatalf("acquire at 2^64-1: %+v, %v; want a *StoreError wrapping ErrTokensExhausted naming the key", g, err)
		}
		if _, err := s.Holder(ctx, "full"); !errors.Is(err, leasehold.ErrNotHeld) {
			t.Fatalf("Holder after the refusal: %v, want ErrNotHeld", err)
		}
		if s.tokens["full"] != math.MaxUint64 {
			t.Fatalf("counter %d after the refusal", s.tokens["full"])
		}
	}
	g, err := s.Acquire(ctx, req("last"))
	if err != nil || g.Token != math.MaxUint64 {
		t.Fatalf("acquire at 2^64-2: %+v, %v; want token 2^64-1", g, err)
	}
	if err := s.Release(ctx, g); err != nil {
		t.Fatal(err)
	}
	if g, err := s.Acquire(ctx, req("last")); !errors.Is(err, leasehold.ErrTokensExhausted) {
		t.Fatalf("acquire after token 2^64-1: %+v, %v; want ErrTokensExhausted", g, err)
	}
	if g, err := s.Acquire(ctx, req("other")); err != nil || g.Token != 1 {
		t.Fatalf("another key: %+v, %v", g, err)
	}
}
