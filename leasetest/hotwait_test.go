package leasetest_test

import (
	"context"
	"errors"
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

// staleWaiter is a memory store that queues waiters (a leasehold.Waiter)
// and answers the first renewal of each grant it made to a waiter as a
// replica that has not yet seen the grant would: not held. It is the
// broken store of the hot-key waiting rule.
type staleWaiter struct {
	*memory.Store
	mu    sync.Mutex
	fresh map[uint64]string // tokens granted to waiters and not yet renewed, to their keys
}

var _ leasehold.Waiter = (*staleWaiter)(nil)

// AcquireWait retries Acquire until the key is granted or ctx ends.
func (s *staleWaiter) AcquireWait(ctx context.Context, r leasehold.AcquireRequest) (leasehold.Grant, error) {
	for {
		g, err := s.Store.Acquire(ctx, r)
		if err == nil {
			s.mu.Lock()
			s.fresh[g.Token] = g.Key
			s.mu.Unlock()
			return g, nil
		}
		if !errors.Is(err, leasehold.ErrHeld) {
			return leasehold.Grant{}, err
		}
		select {
		case <-ctx.Done():
			return leasehold.Grant{}, ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}

func (s *staleWaiter) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	s.mu.Lock()
	k, stale := s.fresh[g.Token]
	stale = stale && k == g.Key
	if stale {
		delete(s.fresh, g.Token)
	}
	s.mu.Unlock()
	if stale {
		return leasehold.Grant{}, leasehold.ErrNotHeld
	}
	return s.Store.Renew(ctx, g)
}

const staleWaiterCatcher = "rule13_waiters_on_a_hot_key_hold_across_renewals"

// TestStaleWaiterStore runs the suite on a staleWaiter; only the
// sensitivity test below runs it, in a child process, and expects it to
// fail.
func TestStaleWaiterStore(t *testing.T) {
	if os.Getenv("LEASETEST_STALE_WAITER") == "" {
		t.Log("runs only as the child of TestSuiteCatchesStaleWaiterRenewal")
		return
	}
	shared := memory.New(nil)
	leasetest.Run(t, leasetest.Config{Open: func(testing.TB) leasehold.Store {
		return &staleWaiter{Store: shared.Reopen(), fresh: make(map[uint64]string)}
	}, Contenders: 20})
}

// TestSuiteCatchesStaleWaiterRenewal checks that a store that tells a
// waiter it lost the key it was just granted fails the hot-key waiting rule.
func TestSuiteCatchesStaleWaiterRenewal(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run", "^TestStaleWaiterStore$", "-test.count=1")
	cmd.Env = append(os.Environ(), "LEASETEST_STALE_WAITER=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the suite passed a store that refuses a waiter's first renewal:\n%s", out)
	}
	if _, ok := err.(*exec.ExitError); !ok {
		t.Fatalf("running the child: %v", err)
	}
	if !strings.Contains(string(out), "--- FAIL: TestStaleWaiterStore/"+staleWaiterCatcher+" ") {
		t.Fatalf("the suite failed a store that refuses a waiter's first renewal, but not in %s:\n%s", staleWaiterCatcher, out)
	}
	if strings.Contains(string(out), "times in a row (the store or the machine is too slow") {
		t.Errorf("a store that refuses a waiter's first renewal made a check inconclusive instead of failing it:\n%s", out)
	}
}
