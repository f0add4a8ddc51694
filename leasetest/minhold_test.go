package leasetest

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
)

// recorder is a testing.TB that records a failure instead of failing the
// test, so a sensitivity test can check that a rule fails.
type recorder struct {
	testing.TB
	failed bool
	msg    string
}

func (r *recorder) Helper()             {}
func (r *recorder) Logf(string, ...any) {}
func (r *recorder) Errorf(f string, a ...any) {
	r.failed, r.msg = true, fmt.Sprintf(f, a...)
}
func (r *recorder) Fatalf(f string, a ...any) {
	r.Errorf(f, a...)
	runtime.Goexit()
}

// runRecorded runs fn with a recorder on a goroutine of its own (Fatalf
// ends that goroutine) and returns the recorder.
func runRecorded(t *testing.T, fn func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(r)
	}()
	<-done
	return r
}

// stuckRenewals is a memory store whose Renew answers yes but extends
// nothing: a released lease kept for its MinHold expires at its first TTL.
type stuckRenewals struct{ *memory.Store }

func (s stuckRenewals) Renew(_ context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	return g, nil
}

// TestMinHoldRule checks that the MinHold rule passes a correct client on
// the memory store and fails a client that ignores MinHold and a store
// that ignores the renewals of a kept lease.
func TestMinHoldRule(t *testing.T) {
	st := memory.New(nil)
	losses := newLossLog()
	c, err := leasehold.New(st, &leasehold.Options{Observer: losses})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ignore := func(ctx context.Context, k string, o leasehold.AcquireOptions) (*leasehold.Lease, error) {
		o.MinHold = 0 // a client that forgets MinHold frees the key at once
		return c.Acquire(ctx, k, o)
	}
	stuck, err := leasehold.New(stuckRenewals{st.Reopen()}, &leasehold.Options{Observer: losses})
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.Close()
	for _, tc := range []struct {
		name     string
		acquire  acquirer
		wantFail bool
	}{
		{"client_keeps_the_key", c.Acquire, false},
		{"client_ignoring_min_hold_is_caught", ignore, true},
		{"store_ignoring_renewals_is_caught", stuck.Acquire, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runRecorded(t, func(tb testing.TB) {
				checkMinHold(tb, tc.acquire, losses, st, "minhold/"+tc.name, 600*time.Millisecond)
			})
			if strings.Contains(r.msg, "times in a row") {
				t.Fatalf("the rule was inconclusive: %s", r.msg)
			}
			if r.failed != tc.wantFail {
				t.Fatalf("rule failed: %v (%s), want failed %v", r.failed, r.msg, tc.wantFail)
			}
			t.Logf("rule: failed %v %s", r.failed, r.msg)
		})
	}
}
