package election_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/election"
	"github.com/leasehold-go/leasehold/memory"
)

func newElection(t *testing.T, st leasehold.Store, key string, ttl time.Duration) *election.Election {
	t.Helper()
	c, err := leasehold.New(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	e, err := election.New(c, key, &election.Options{TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func ExampleElection_Run() {
	c, _ := leasehold.New(memory.New(nil), nil)
	defer c.Close()
	e, _ := election.New(c, "scheduler", nil)
	ctx, stop := context.WithCancel(context.Background())
	err := e.Run(ctx, func(ctx context.Context, l *election.Leadership) error {
		fmt.Println("leading with epoch", l.Epoch())
		// Lead until ctx ends: the leadership's loss, or Run's end.
		stop()
		<-ctx.Done()
		return nil
	})
	fmt.Println(err)
	// Output:
	// leading with epoch 1
	// context canceled
}

func TestNewRefusesBadInput(t *testing.T) {
	c, _ := leasehold.New(memory.New(nil), nil)
	defer c.Close()
	if _, err := election.New(c, "", nil); !errors.Is(err, leasehold.ErrInvalidKey) {
		t.Errorf("empty key: %v", err)
	}
	for _, tc := range []struct {
		field string
		opts  election.Options
	}{
		{"PollInterval", election.Options{PollInterval: -time.Second}},
		{"TTL", election.Options{TTL: -1}},
		{"TTL", election.Options{TTL: leasehold.MaxTTL + 1}},
		// Backoff MaxInt64 made Run's random backoff panic.
		{"Backoff", election.Options{Backoff: math.MaxInt64}},
		{"Backoff", election.Options{Backoff: math.MinInt64}},
		{"PollInterval", election.Options{PollInterval: math.MaxInt64}},
	} {
		if _, err := election.New(c, "k", &tc.opts); err == nil || !strings.Contains(err.Error(), "Options."+tc.field) {
			t.Errorf("%+v: got %v, want an error naming Options.%s", tc.opts, err, tc.field)
		}
	}
}

// Run returns the leader's own error, after resigning.
func TestRunReturnsLeadError(t *testing.T) {
	st := memory.New(nil)
	e := newElection(t, st, "k", time.Minute)
	boom := errors.New("boom")
	if err := e.Run(t.Context(), func(context.Context, *election.Leadership) error { return boom }); err != boom {
		t.Fatalf("Run = %v, want boom", err)
	}
	if _, err := st.Holder(t.Context(), "k"); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("after Run: Holder = %v, want the key free", err)
	}
}

// RunIfLeader runs nothing once the leadership ended, and cancels the
// function's context when it ends.
func TestRunIfLeader(t *testing.T) {
	e := newElection(t, memory.New(nil), "k", time.Minute)
	l, err := e.Campaign(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	err = l.RunIfLeader(t.Context(), func(ctx context.Context) error {
		go func() { _ = l.Resign(context.Background()) }()
		<-ctx.Done()
		return context.Cause(ctx)
	})
	if !errors.Is(err, leasehold.ErrReleased) {
		t.Fatalf("RunIfLeader's context ended with %v, want ErrReleased", err)
	}
	ran := false
	err = l.RunIfLeader(t.Context(), func(context.Context) error { ran = true; return nil })
	if !errors.Is(err, election.ErrNotLeader) || ran {
		t.Fatalf("after Resign: RunIfLeader = %v, ran %v", err, ran)
	}
}

// plain hides the memory store's capabilities, so that Observe polls.
type plain struct{ leasehold.Store }

// Observe polls a store without notifications, and sees each leader.
func TestObservePolls(t *testing.T) {
	st := memory.New(nil)
	obs := newElection(t, plain{st}, "k", 300*time.Millisecond)
	states := obs.Observe(t.Context())
	if s := <-states; s.Leading || s.Err != nil {
		t.Fatalf("first state %+v, want no leader", s)
	}
	for i := range 2 {
		l, err := newElection(t, st, "k", 300*time.Millisecond).Campaign(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if s := <-states; !s.Leading || s.Epoch != l.Epoch() {
			t.Fatalf("term %d: observed %+v, want epoch %d", i, s, l.Epoch())
		}
		_ = l.Resign(t.Context())
		if s := <-states; s.Leading {
			t.Fatalf("term %d: after Resign, observed %+v", i, s)
		}
	}
}

// failing is a store whose reads fail once down is set: a store that went
// away (a dead server), as the observer meets it.
type failing struct {
	leasehold.Store
	down chan struct{}
}

func (f failing) Holder(ctx context.Context, key string) (leasehold.Holder, error) {
	select {
	case <-f.down:
		return leasehold.Holder{}, &leasehold.StoreError{Store: "test", Op: "holder", Err: errors.New("connection refused")}
	default:
		return f.Store.Holder(ctx, key)
	}
}

// An observer whose store goes away gets an error on its stream, again at
// each poll while the store stays away, not a silent end; once the store is
// closed, the stream ends after a state with ErrClosed.
func TestObserveReportsAStoreThatWentAway(t *testing.T) {
	st := failing{Store: memory.New(nil), down: make(chan struct{})}
	states := newElection(t, st, "k", 300*time.Millisecond).Observe(t.Context())
	if s := <-states; s.Leading || s.Err != nil {
		t.Fatalf("first state %+v, want no leader", s)
	}
	close(st.down)
	for i := range 2 {
		s, ok := <-states
		var se *leasehold.StoreError
		if !ok || !errors.As(s.Err, &se) {
			t.Fatalf("state %d after the store went away: %+v (open %v), want its StoreError", i, s, ok)
		}
	}

	closed := memory.New(nil)
	states = newElection(t, plain{closed}, "k", 300*time.Millisecond).Observe(t.Context())
	<-states
	_ = closed.Close()
	s := <-states
	if !errors.Is(s.Err, leasehold.ErrClosed) {
		t.Fatalf("after Close: %+v, want ErrClosed", s)
	}
	if _, ok := <-states; ok {
		t.Fatal("the stream went on after ErrClosed")
	}
}
