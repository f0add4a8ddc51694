package leasetest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/election"
)

// The election rules: the election package over the store under test.

// term is one leadership as its leader saw it.
type term struct {
	who        int
	epoch      uint64
	start, end time.Time // Campaign returned; lead returned, or the holder's deadline if earlier
}

// electionOneLeader checks that at most one candidate leads at a time, by
// the holder's deadline, and that epochs increase from term to term: three
// candidates, each with its own handle and client, run the leader loop and
// lead briefly, until twelve terms have passed.
// See docs/design.md#leader-election.
func (s *suite) electionOneLeader(t *testing.T) {
	k := key(t, "election")
	var workers []func(ctx context.Context, keep func(term))
	for i := range 3 {
		e := s.election(t, k, nil)
		workers = append(workers, func(ctx context.Context, keep func(term)) {
			_ = e.Run(ctx, func(lctx context.Context, l *election.Leadership) error {
				tm := term{who: i, epoch: l.Epoch(), start: time.Now()}
				_ = l.RunIfLeader(lctx, func(c context.Context) error {
					sleepCtx(c, 5*time.Millisecond)
					return nil
				})
				tm.end = time.Now()
				if d := l.Lease().Deadline(); d.Before(tm.end) {
					tm.end = d
				}
				keep(tm)
				return nil
			})
		})
	}
	terms := contend(t, 12, workers)
	if len(terms) < 12 {
		t.Fatalf("only %d terms before the time limit", len(terms))
	}
	slices.SortFunc(terms, func(a, b term) int { return a.start.Compare(b.start) })
	for i := 1; i < len(terms); i++ {
		a, b := terms[i-1], terms[i]
		if b.epoch <= a.epoch {
			t.Errorf("term %d (candidate %d) has epoch %d, not above the previous term's %d", i, b.who, b.epoch, a.epoch)
		}
		if b.start.Before(a.end) {
			t.Errorf("two leaders: candidate %d led from %s while candidate %d led until %s",
				b.who, b.start.Format(time.StampMicro), a.who, a.end.Format(time.StampMicro))
		}
	}
}

// electionObserver checks that an observer sees each leader with its epoch,
// in increasing order, within the TTL and a poll interval (a liveness
// bound, generous for slow machines), and that it gets an error, not a
// silent end, when its store goes away.
// See docs/design.md#leader-election.
func (s *suite) electionObserver(t *testing.T) {
	k := key(t, "election")
	ost := s.cfg.Open(t)
	oc := s.client(t, ost, nil)
	oe, err := election.New(oc, k, &election.Options{TTL: s.ttl})
	if err != nil {
		t.Fatal(err)
	}
	states := oe.Observe(ctxT(t))
	limit := 10*s.ttl + 10*time.Second
	next := func(want func(election.State) bool, what string) election.State {
		t.Helper()
		timeout := time.After(limit)
		for {
			select {
			case st, ok := <-states:
				if !ok {
					t.Fatalf("the stream ended while waiting for %s", what)
				}
				if st.Err != nil {
					t.Fatalf("observer error while waiting for %s: %v", what, st.Err)
				}
				if want(st) {
					return st
				}
			case <-timeout:
				t.Fatalf("no %s within %s", what, limit)
			}
		}
	}
	next(func(st election.State) bool { return !st.Leading }, "first state: no leader")
	var last uint64
	for i := range 2 {
		e := s.election(t, k, nil)
		l, err := e.Campaign(ctxT(t))
		if err != nil {
			t.Fatalf("campaign %d: %v", i, err)
		}
		st := next(func(st election.State) bool { return st.Leading }, "a leader")
		if st.Epoch != l.Epoch() || st.Epoch <= last || st.Label == "" {
			t.Fatalf("observed leader %+v; the leader has epoch %d, the previous %d", st, l.Epoch(), last)
		}
		last = st.Epoch
		if err := l.Resign(ctxT(t)); err != nil {
			t.Fatalf("resign: %v", err)
		}
		next(func(st election.State) bool { return !st.Leading }, "no leader after the resignation")
	}
	_ = ost.Close()
	select {
	case st, ok := <-states:
		if !ok || !errors.Is(st.Err, leasehold.ErrClosed) {
			t.Fatalf("after the observer's store closed: %+v (open %v); want an error wrapping ErrClosed", st, ok)
		}
	case <-time.After(limit):
		t.Fatalf("no error on the stream within %s of the store's Close", limit)
	}
	if _, ok := <-states; ok {
		t.Fatal("the stream went on after ErrClosed")
	}
}

// hungRenewals is a store whose renewals hang until their context ends:
// a leader that is paused, as far as the store can tell.
type hungRenewals struct{ leasehold.Store }

func (hungRenewals) Renew(ctx context.Context, _ leasehold.Grant) (leasehold.Grant, error) {
	<-ctx.Done()
	return leasehold.Grant{}, ctx.Err()
}

// electionPausedLeaderLoses checks that a leader whose renewals cannot
// reach the store loses its leadership, and that its context ends, by the
// holder's deadline, before the next leader's term begins.
// See docs/design.md#leader-election.
func (s *suite) electionPausedLeaderLoses(t *testing.T) {
	k := key(t, "election")
	pc := s.client(t, hungRenewals{s.open(t)}, nil)
	pe, err := election.New(pc, k, &election.Options{TTL: s.ttl})
	if err != nil {
		t.Fatal(err)
	}
	paused, err := pe.Campaign(ctxT(t))
	if err != nil {
		t.Fatalf("campaign: %v", err)
	}
	next, err := s.election(t, k, nil).Campaign(ctxT(t))
	if err != nil {
		t.Fatalf("the next campaign: %v", err)
	}
	started := time.Now()
	defer next.Resign(ctxT(t))
	waitDone(t, paused.Done(), 10*time.Second, "the paused leader's loss")
	if !errors.Is(paused.Err(), leasehold.ErrExpired) {
		t.Fatalf("the paused leader ended with %v, want ErrExpired", paused.Err())
	}
	if d := paused.Lease().Deadline(); !d.Before(started) {
		t.Fatalf("the next leader began at %s, before the paused leader's deadline %s", started.Format(time.StampMicro), d.Format(time.StampMicro))
	}
	if next.Epoch() <= paused.Epoch() {
		t.Fatalf("the next epoch %d is not above the paused leader's %d", next.Epoch(), paused.Epoch())
	}
}

// election returns a candidate on key with its own store handle and
// client, all closed when t ends.
func (s *suite) election(t *testing.T, key string, o *leasehold.Options) *election.Election {
	t.Helper()
	e, err := election.New(s.client(t, s.open(t), o), key, &election.Options{TTL: s.ttl})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// contend runs the workers together until they have kept want records
// between them, or 45 s have passed, and returns the records. A worker
// returns once its context ends.
func contend[R any](t *testing.T, want int, workers []func(ctx context.Context, keep func(R))) []R {
	ctx, cancel := context.WithTimeout(ctxT(t), 45*time.Second)
	defer cancel()
	var mu sync.Mutex
	var kept []R
	keep := func(r R) {
		mu.Lock()
		defer mu.Unlock()
		kept = append(kept, r)
		if len(kept) >= want {
			cancel()
		}
	}
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Go(func() { w(ctx, keep) })
	}
	wg.Wait()
	return kept
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
	case <-ctx.Done():
	}
}
