package fence

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
)

func TestMemoryGuardSequence(t *testing.T) {
	ctx := context.Background()
	var g MemoryGuard // the zero value is ready
	if _, ok := g.Highest("a"); ok {
		t.Fatal("Highest of an unseen resource reported ok")
	}
	steps := []struct {
		resource string
		token    uint64
		stale    bool
		highest  uint64
	}{
		{"a", 5, false, 5},
		{"a", 5, false, 5}, // equal: the current holder again
		{"a", 4, true, 5},
		{"a", 0, true, 5},
		{"a", 6, false, 6},
		{"b", 1, false, 1}, // resources are independent
		{"a", 5, true, 6},
		{"b", 0, true, 1},
		{"", 0, false, 0}, // the empty name is a resource like any other
	}
	for i, s := range steps {
		err := g.Admit(ctx, s.resource, s.token)
		if s.stale {
			var se *StaleError
			if !errors.As(err, &se) || !errors.Is(err, ErrStale) {
				t.Fatalf("step %d: Admit(%q, %d) = %v; want *StaleError", i, s.resource, s.token, err)
			}
			if se.Resource != s.resource || se.Token != s.token || se.Highest != s.highest {
				t.Fatalf("step %d: got %+v", i, *se)
			}
		} else if err != nil {
			t.Fatalf("step %d: Admit(%q, %d) = %v; want nil", i, s.resource, s.token, err)
		}
		if h, ok := g.Highest(s.resource); !ok || h != s.highest {
			t.Fatalf("step %d: Highest(%q) = %d, %v; want %d", i, s.resource, h, ok, s.highest)
		}
	}
}

// TestMemoryGuardModel compares the guard with a trivial model on random
// sequences.
func TestMemoryGuardModel(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	var g MemoryGuard
	model := map[string]uint64{}
	for i := 0; i < 5000; i++ {
		res := string(rune('a' + rng.IntN(4)))
		tok := rng.Uint64N(50)
		err := g.Admit(ctx, res, tok)
		h, seen := model[res]
		wantStale := seen && tok < h
		if wantStale != (err != nil) {
			t.Fatalf("op %d: Admit(%q, %d) = %v with highest %d (seen %v)", i, res, tok, err, h, seen)
		}
		if !wantStale {
			model[res] = tok
		}
	}
}

// TestMemoryGuardConcurrent admits increasing tokens from many goroutines.
// Whatever the interleaving, every goroutine's own tokens increase, the
// maximum token is admitted, and an admitted token was never below one
// admitted earlier by the same goroutine (checked through the guard's
// answers).
func TestMemoryGuardConcurrent(t *testing.T) {
	ctx := context.Background()
	var g MemoryGuard
	const workers, perWorker = 8, 500
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lastAdmitted uint64
			for i := 1; i <= perWorker; i++ {
				tok := uint64(i*workers + w)
				err := g.Admit(ctx, "r", tok)
				if err == nil {
					lastAdmitted = tok
					continue
				}
				var se *StaleError
				if !errors.As(err, &se) || se.Highest <= tok || se.Highest < lastAdmitted {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if h, _ := g.Highest("r"); h != uint64(perWorker*workers+workers-1) {
		t.Fatalf("Highest = %d; want the maximum token %d", h, perWorker*workers+workers-1)
	}
}

func TestGuardFunc(t *testing.T) {
	var got []any
	g := GuardFunc(func(_ context.Context, resource string, token uint64) error {
		got = append(got, resource, token)
		return ErrStale
	})
	if err := g.Admit(context.Background(), "x", 9); err != ErrStale {
		t.Fatalf("Admit = %v", err)
	}
	if len(got) != 2 || got[0] != "x" || got[1] != uint64(9) {
		t.Fatalf("GuardFunc got %v", got)
	}
}
