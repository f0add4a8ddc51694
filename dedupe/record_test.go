package dedupe_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/leasehold-go/leasehold/dedupe"
)

func TestValidateID(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want string // "" means valid; else a fragment of the error
	}{
		{"order-42", ""},
		{"queue/item 7 ✓", ""},
		{strings.Repeat("x", dedupe.MaxIDLen), ""},
		{"", "empty"},
		{strings.Repeat("x", dedupe.MaxIDLen+1), "256 bytes"},
		{"bad\xff", "UTF-8"},
		{"nul\x00byte", "control character 0x0 at offset 3"},
		{"tab\tid", "control character 0x9 at offset 3"},
		{"c1\u0085", "control character 0x85"},
	} {
		err := dedupe.ValidateID(tc.id)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("ValidateID(%q) = %v, want nil", tc.id, err)
		case tc.want != "" && (!errors.Is(err, dedupe.ErrInvalidID) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("ValidateID(%q) = %v, want ErrInvalidID naming %q", tc.id, err, tc.want)
		}
	}
}

func TestMemory(t *testing.T) {
	ctx := context.Background()
	var m dedupe.Memory
	if seen, err := m.Seen(ctx, "a"); seen || err != nil {
		t.Fatalf("Seen on an empty record = %v, %v", seen, err)
	}
	if first, err := m.Mark(ctx, "a"); !first || err != nil {
		t.Fatalf("first Mark = %v, %v; want true, nil", first, err)
	}
	if first, err := m.Mark(ctx, "a"); first || err != nil {
		t.Fatalf("second Mark = %v, %v; want false, nil", first, err)
	}
	if seen, _ := m.Seen(ctx, "a"); !seen {
		t.Fatal("marked id not seen")
	}
	if _, err := m.Mark(ctx, ""); !errors.Is(err, dedupe.ErrInvalidID) {
		t.Fatalf("Mark(\"\") = %v, want ErrInvalidID", err)
	}
	if _, err := m.Seen(ctx, ""); !errors.Is(err, dedupe.ErrInvalidID) {
		t.Fatalf("Seen(\"\") = %v, want ErrInvalidID", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := m.Mark(cctx, "b"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Mark on a cancelled context = %v", err)
	}
	m.Forget("a")
	if seen, _ := m.Seen(ctx, "a"); seen || m.Len() != 0 {
		t.Fatalf("after Forget: seen %v, len %d", seen, m.Len())
	}
}

// Exactly one of many concurrent marks of one id is first.
func TestMemoryConcurrentMarks(t *testing.T) {
	var m dedupe.Memory
	var wg sync.WaitGroup
	var mu sync.Mutex
	firsts := 0
	for range 32 {
		wg.Go(func() {
			first, err := m.Mark(context.Background(), "x")
			if err != nil {
				t.Error(err)
			}
			if first {
				mu.Lock()
				firsts++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firsts != 1 {
		t.Fatalf("%d marks were first, want 1", firsts)
	}
}
