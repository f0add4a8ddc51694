package leasetest_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/leasetest"
	"github.com/leasehold-go/leasehold/memory"
)

// A broken store is a memory store with one rule deliberately broken. The
// suite must fail on every one of them: a conformance suite that cannot
// fail proves nothing.
type broken struct {
	*memory.Store
	mutation string
	mu       sync.Mutex
	last     map[string]leasehold.Grant // the latest grant per key
}

func (b *broken) Acquire(ctx context.Context, r leasehold.AcquireRequest) (leasehold.Grant, error) {
	if b.mutation == "acquire_not_exclusive" || (b.mutation == "slot_keys_not_exclusive" && strings.Contains(r.Key, "/slot/")) {
		g, err := b.Store.Acquire(ctx, r)
		if err != nil {
			h, _ := b.Store.Holder(ctx, r.Key)
			return leasehold.Grant{Key: r.Key, Owner: r.Owner, Token: h.Token + 1, TTL: r.TTL}, nil
		}
		return g, nil
	}
	if b.mutation == "late_cleanup_by_key" {
		if d, ok := ctx.Deadline(); ok && time.Until(d) < 10*time.Millisecond {
			return b.abandonLate(r)
		}
	}
	g, err := b.Store.Acquire(ctx, r)
	if err == nil && b.mutation == "token_repeats" {
		g.Token = 1
	}
	if err == nil {
		b.mu.Lock()
		b.last[r.Key] = g
		b.mu.Unlock()
	}
	return g, err
}

func (b *broken) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	switch b.mutation {
	case "renew_ignores_owner":
		return g, nil
	case "renew_does_not_extend":
		if h, err := b.Store.Holder(ctx, g.Key); err != nil || h.Token != g.Token {
			return leasehold.Grant{}, leasehold.ErrNotHeld
		}
		return g, nil
	}
	return b.Store.Renew(ctx, g)
}

// abandonLate models an acquire whose reply was lost: it is applied, the
// caller hears a timeout, and its clean-up, delayed in flight, lands just
// after the next grant of the key and matches the key alone, removing that
// grant.
func (b *broken) abandonLate(r leasehold.AcquireRequest) (leasehold.Grant, error) {
	bg := context.Background()
	first, err := b.Store.Acquire(bg, r)
	if err != nil {
		first = leasehold.Grant{}
	}
	go func() {
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
			b.mu.Lock()
			g, ok := b.last[r.Key]
			b.mu.Unlock()
			if ok && g.Token != first.Token {
				_ = b.Store.Release(bg, g)
				return
			}
		}
	}()
	return leasehold.Grant{}, context.DeadlineExceeded
}

// mutations are the deliberately broken rules, each with a subtest that
// must catch it.
var mutations = []struct{ name, catcher string }{
	{"acquire_not_exclusive", "rule1_acquire_is_exclusive_under_contention"},
	{"token_repeats", "rule5_token_increases_across_release"},
	{"renew_ignores_owner", "rule2_renew_and_release_by_wrong_owner_refused_and_harmless"},
	{"renew_does_not_extend", "rule2_renew_by_owner_extends"},
	{"late_cleanup_by_key", "rule2_abandoned_acquire_cleanup_spares_later_grant"},
	// Exclusive on every key but a semaphore's slot keys: only the
	// semaphore rule sees the over-admission.
	{"slot_keys_not_exclusive", "semaphore_at_most_n_holders_under_contention"},
}

// TestBrokenStore runs the suite on one broken store; only the sensitivity
// test below runs it, in a child process, and expects it to fail.
func TestBrokenStore(t *testing.T) {
	m := os.Getenv("LEASETEST_MUTATION")
	if m == "" {
		t.Log("runs only as the child of TestSuiteCatchesBrokenStores")
		return
	}
	shared := memory.New(nil)
	leasetest.Run(t, leasetest.Config{Open: func(testing.TB) leasehold.Store {
		return &broken{Store: shared.Reopen(), mutation: m, last: map[string]leasehold.Grant{}}
	}, Contenders: 20})
}

func TestSuiteCatchesBrokenStores(t *testing.T) {
	for _, mu := range mutations {
		m, catcher := mu.name, mu.catcher
		t.Run(m, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run", "^TestBrokenStore$", "-test.count=1")
			cmd.Env = append(os.Environ(), "LEASETEST_MUTATION="+m)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a store with %s:\n%s", m, out)
			}
			if _, ok := err.(*exec.ExitError); !ok {
				t.Fatalf("running the child: %v", err)
			}
			if !strings.Contains(string(out), "--- FAIL: TestBrokenStore/"+catcher+" ") {
				t.Fatalf("the suite failed a store with %s, but not in %s:\n%s", m, catcher, out)
			}
			if strings.Contains(string(out), "times in a row (the store or the machine is too slow") {
				t.Errorf("a store with %s made a check inconclusive instead of failing it:\n%s", m, out)
			}
		})
	}
}
