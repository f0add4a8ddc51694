package bench

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
)

// leftover returns the keys under prefix still held in st.
func leftover(t *testing.T, st *memory.Store, prefix string) []string {
	t.Helper()
	hs, err := st.List(context.Background(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, h := range hs {
		keys = append(keys, h.Key)
	}
	return keys
}

func TestRunDistinct(t *testing.T) {
	st := memory.New(nil)
	var mu sync.Mutex
	var phases []string
	res, err := Run(context.Background(), st, Options{
		Clients: 4, Duration: 300 * time.Millisecond, HoldTTL: 300 * time.Millisecond, Holders: 2,
		HandoffRounds: 3, HandoffHold: 5 * time.Millisecond, Prefix: "t/distinct/",
		ProgressEvery: 20 * time.Millisecond,
		Progress: func(p Progress) {
			mu.Lock()
			defer mu.Unlock()
			if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
				phases = append(phases, p.Phase)
			}
			if p.Store != "memory" || p.Clients != 4 {
				t.Errorf("progress %+v: want store memory, 4 clients", p)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Store != "memory" || res.Clients != 4 || res.Keys != Distinct || res.Partial {
		t.Errorf("result header %+v", res)
	}
	if res.Errors != 0 {
		t.Errorf("%d errors, first: %s", res.Errors, res.FirstError)
	}
	if res.Cycles == 0 || res.Acquire.N != int(res.Cycles) || res.Release.N != int(res.Cycles) {
		t.Errorf("cycles %d, acquire samples %d, release samples %d", res.Cycles, res.Acquire.N, res.Release.N)
	}
	if res.CyclesPerSec() <= 0 || res.Elapsed < 300*time.Millisecond {
		t.Errorf("rate %v over %v", res.CyclesPerSec(), res.Elapsed)
	}
	if !(res.Acquire.P50 <= res.Acquire.P90 && res.Acquire.P90 <= res.Acquire.P99 && res.Acquire.P99 <= res.Acquire.Max) {
		t.Errorf("acquire percentiles out of order: %+v", res.Acquire)
	}
	if res.Refused != 0 {
		t.Errorf("distinct keys refused %d times", res.Refused)
	}
	if res.Holders != 2 || res.HoldsLost != 0 || res.Renewals == 0 || res.RenewalsPerSec <= 0 || res.Renew.N == 0 {
		t.Errorf("holders %d lost %d renewals %d (%v/s, %d timed)", res.Holders, res.HoldsLost, res.Renewals, res.RenewalsPerSec, res.Renew.N)
	}
	if res.Handoff.N != 3 || res.Handoff.P50 <= 0 {
		t.Errorf("handoff %+v, want 3 samples", res.Handoff)
	}
	if keys := leftover(t, st, "t/distinct/"); len(keys) > 0 {
		t.Errorf("leases left held: %v", keys)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(phases) == 0 || phases[0] != "cycles" {
		t.Errorf("progress phases %v, want cycles first", phases)
	}
}

func TestRunHot(t *testing.T) {
	st := memory.New(nil)
	res, err := Run(context.Background(), st, Options{
		Name: "mem-hot", Clients: 4, Duration: 200 * time.Millisecond, Keys: Hot, Holders: -1, HandoffRounds: -1, Prefix: "t/hot/",
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Store != "mem-hot" || res.Keys != Hot || res.Errors != 0 || res.Cycles == 0 {
		t.Errorf("result %+v", res)
	}
	if res.Holders != 0 || res.Renewals != 0 || res.Handoff.N != 0 {
		t.Errorf("holders and hand-offs were turned off: %+v", res)
	}
	if keys := leftover(t, st, "t/hot/"); len(keys) > 0 {
		t.Errorf("leases left held: %v", keys)
	}
}

// TestRunInterrupted cancels the run from its first progress report: the
// run must return promptly with what it measured, marked partial, and
// leave nothing held.
func TestRunInterrupted(t *testing.T) {
	for _, keys := range []KeyMode{Distinct, Hot} {
		t.Run(keys.String(), func(t *testing.T) {
			st := memory.New(nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			prefix := "t/int/" + keys.String() + "/"
			res, err := Run(ctx, st, Options{
				Clients: 3, Duration: time.Hour, Keys: keys, Holders: 2, Prefix: prefix,
				ProgressEvery: 10 * time.Millisecond,
				Progress:      func(p Progress) { cancel() },
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if !res.Partial || res.Clients != 3 || res.Elapsed >= time.Hour {
				t.Errorf("result %+v: want partial, 3 clients", res)
			}
			if res.Errors != 0 {
				t.Errorf("an interrupt is not an error: %d, first %s", res.Errors, res.FirstError)
			}
			if keys := leftover(t, st, prefix); len(keys) > 0 {
				t.Errorf("leases left held after the interrupt: %v", keys)
			}
		})
	}
}

func TestRunBadOptions(t *testing.T) {
	st := memory.New(nil)
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"negative clients", Options{Clients: -1}, "clients"},
		{"negative duration", Options{Duration: -time.Second}, "negative"},
		{"unknown key mode", Options{Keys: KeyMode(7)}, "key mode"},
		{"TTL above the maximum", Options{TTL: 48 * time.Hour}, "TTL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(context.Background(), st, tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

// failing is a store whose acquires fail as an unreachable server's would.
type failing struct{ *memory.Store }

func (failing) Acquire(context.Context, leasehold.AcquireRequest) (leasehold.Grant, error) {
	return leasehold.Grant{}, &leasehold.StoreError{Store: "memory", Op: "acquire", Err: errors.New("connection refused")}
}

func TestRunCountsStoreErrors(t *testing.T) {
	res, err := Run(context.Background(), failing{memory.New(nil)}, Options{Clients: 2, Duration: 50 * time.Millisecond, HandoffRounds: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors == 0 || res.Cycles != 0 || !strings.Contains(res.FirstError, "connection refused") {
		t.Errorf("errors %d cycles %d first %q", res.Errors, res.Cycles, res.FirstError)
	}
}

func TestParseKeyMode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want KeyMode
		ok   bool
	}{
		{"distinct", Distinct, true}, {"hot", Hot, true}, {" HOT ", Hot, true}, {"", 0, false}, {"cold", 0, false},
	} {
		got, err := ParseKeyMode(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseKeyMode(%q) = %v, %v", tc.in, got, err)
		}
	}
}

func TestReachable(t *testing.T) {
	st := memory.New(nil)
	if err := Reachable(context.Background(), st, 0); err != nil {
		t.Errorf("open memory store: %v", err)
	}
	st.Close()
	err := Reachable(context.Background(), st, time.Second)
	if err == nil || !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), "memory") {
		t.Errorf("closed store: err = %v, want a store error naming the store", err)
	}
}
