package storetest

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/leasehold-go/leasehold"
	lhredis "github.com/leasehold-go/leasehold/redis"
	"github.com/leasehold-go/leasehold/redis/internal/core"
	"github.com/leasehold-go/leasehold/redis/redlock"
)

// earlyEnv is a store over the first three masters whose third one holds
// back the calls of script and whose first one can be turned off, and the
// raw nodes of the three.
type earlyEnv struct {
	st    *redlock.Store
	slow  *gatedClient
	first *downClient
	nodes []*core.Node
}

func (e *RedlockEnv) early(t *testing.T, script *core.Script) *earlyEnv {
	var (
		clients []lhredis.Client
		ee      earlyEnv
	)
	for _, m := range e.Masters[:3] {
		c := e.NewClient(t, m.Addr())
		clients = append(clients, c)
		ee.nodes = append(ee.nodes, &core.Node{Client: c, Names: names(t)})
	}
	ee.slow = &gatedClient{Client: clients[2], script: script, gate: make(chan struct{})}
	clients[2] = ee.slow
	ee.first = &downClient{Client: clients[0]}
	clients[0] = ee.first
	// A node timeout far beyond the test: a call that waited for the
	// slow master would wait for the gate.
	st, err := redlock.New(clients, &redlock.Options{NodeTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ee.st = st
	return &ee
}

// mustReturn runs f, which must return while the slow master holds back
// its call (a wait of 20 s stands for forever).
func (ee *earlyEnv) mustReturn(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		ee.slow.open()
		<-done
		t.Fatalf("%s waited for the slow master", what)
	}
	if ee.slow.held() != 1 {
		t.Fatalf("%s returned with no call held at the slow master, want one still in flight", what)
	}
}

// heldGrant acquires keys until do, called on the grant, returns nil while
// its call to the slow master is held back, and returns that key.
//
// A renew or release can return before the slow master answers only if
// the others that hold the grant are a majority without it; the grant may
// lack a master whose acquire answered after Acquire returned (it joins
// the grant when its answer comes: Holder's round trip gives it time).
// do runs on a context that ends after 5 s, which is how an attempt whose
// grant lacked a master ends.
func (ee *earlyEnv) heldGrant(t *testing.T, what string, do func(ctx context.Context, g leasehold.Grant) error) string {
	t.Helper()
	for range 10 {
		k := Key(t, "k")
		g, err := ee.st.Acquire(Ctx(t), Req(k, 30*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = ee.st.Holder(Ctx(t), k)
		before := ee.slow.held()
		ctx, cancel := context.WithTimeout(Ctx(t), 5*time.Second)
		err = do(ctx, g)
		cancel()
		switch {
		case err == nil && ee.slow.held() == before+1:
			return k
		case err == nil: // the grant lacked the slow master
			_ = ee.st.Release(Ctx(t), g)
		case !errors.Is(err, context.DeadlineExceeded):
			t.Fatalf("%s: %v", what, err)
		}
	}
	t.Fatalf("no %s of 10 returned while the slow master held its call", what)
	return ""
}

// free fails unless no master holds key.
func (ee *earlyEnv) free(t *testing.T, key, when string) {
	t.Helper()
	for i, n := range ee.nodes {
		if l, err := n.Holder(Ctx(t), key); err != nil || l != nil {
			t.Errorf("%s: master %d holds %+v, %v; want the key free", when, i, l, err)
		}
	}
}

// earlyAnswers checks that acquire, renew and a refused acquire return once
// a majority settles them, without waiting for the slowest master (release
// waits for it, so that the key is free everywhere when it returns),
// and that what that master does late is cleaned up in the background,
// finished (with every goroutine of the store) when Close returns.
func (e *RedlockEnv) earlyAnswers(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	t.Run("acquire", func(t *testing.T) { e.earlyAcquire(t, false) })
	t.Run("acquire_then_release", func(t *testing.T) { e.earlyAcquire(t, true) })
	t.Run("acquire_then_renew_on_the_late_master", func(t *testing.T) { e.earlyRenewLate(t) })
	t.Run("renew", func(t *testing.T) { e.earlyRenew(t) })
	t.Run("release", func(t *testing.T) { e.earlyRelease(t) })
	t.Run("held", func(t *testing.T) { e.earlyHeld(t) })
	t.Run("abandoned", func(t *testing.T) { e.earlyAbandoned(t) })
}

// An acquire returns once two masters of three granted. The slow master
// grants later, the same token, which Holder reports before and after.
// If the grant was released by then, that late grant is deleted.
func (e *RedlockEnv) earlyAcquire(t *testing.T, release bool) {
	ee := e.early(t, core.AcquireScript)
	k := Key(t, "k")
	var (
		g   leasehold.Grant
		err error
	)
	ee.mustReturn(t, "acquire", func() { g, err = ee.st.Acquire(Ctx(t), Req(k, 30*time.Second)) })
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	if h, err := ee.st.Holder(Ctx(t), k); err != nil || h.Token != g.Token {
		t.Fatalf("Holder before the slow master granted: %+v, %v; want token %d", h, err, g.Token)
	}
	if release {
		if err := ee.st.Release(Ctx(t), g); err != nil {
			t.Fatalf("release: %v", err)
		}
		ee.slow.open()
		ee.st.Close() // waits for the late grant and its deletion
		ee.free(t, k, "after Close")
		return
	}
	ee.slow.open()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l, err := ee.nodes[2].Holder(Ctx(t), k)
		if err != nil {
			t.Fatal(err)
		}
		if l != nil {
			if l.Token != g.Token {
				t.Fatalf("the slow master granted token %d, want the grant's %d", l.Token, g.Token)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow master never granted")
		}
		time.Sleep(time.Millisecond)
	}
	if h, err := ee.st.Holder(Ctx(t), k); err != nil || h.Token != g.Token {
		t.Fatalf("Holder after the slow master granted: %+v, %v; want token %d", h, err, g.Token)
	}
	if err := ee.st.Release(Ctx(t), g); err != nil {
		t.Fatalf("release: %v", err)
	}
	ee.st.Close()
	ee.free(t, k, "after the release")
}

// An acquire returns once two masters of three granted; then one of the
// two goes down. A renewal needs the third, whose grant had not come when
// Acquire returned: it waits for it and renews it.
func (e *RedlockEnv) earlyRenewLate(t *testing.T) {
	ee := e.early(t, core.AcquireScript)
	k := Key(t, "k")
	var (
		g   leasehold.Grant
		err error
	)
	ee.mustReturn(t, "acquire", func() { g, err = ee.st.Acquire(Ctx(t), Req(k, 30*time.Second)) })
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	ee.first.down.Store(true)
	errc := make(chan error, 1)
	go func() {
		_, err := ee.st.Renew(Ctx(t), g)
		errc <- err
	}()
	for ee.first.calls.Load() == 0 { // the renewal was sent
		time.Sleep(time.Millisecond)
	}
	ee.slow.open()
	if err := <-errc; err != nil {
		t.Fatalf("renew with the first master down and the third's grant late: %v", err)
	}
	ee.first.down.Store(false)
	if err := ee.st.Release(Ctx(t), g); err != nil {
		t.Fatalf("release: %v", err)
	}
	ee.st.Close()
	ee.free(t, k, "after the release")
}

func (e *RedlockEnv) earlyRenew(t *testing.T) {
	ee := e.early(t, core.RenewScript)
	var g leasehold.Grant
	k := ee.heldGrant(t, "renew", func(ctx context.Context, gr leasehold.Grant) error {
		g = gr
		_, err := ee.st.Renew(ctx, gr)
		return err
	})
	ee.slow.open()
	if err := ee.st.Release(Ctx(t), g); err != nil {
		t.Fatalf("release: %v", err)
	}
	ee.st.Close()
	ee.free(t, k, "after the release")
}

func (e *RedlockEnv) earlyRelease(t *testing.T) {
	ee := e.early(t, core.ReleaseScript)
	for range 10 {
		k := Key(t, "k")
		g, err := ee.st.Acquire(Ctx(t), Req(k, 30*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		// Time for the slow master's acquire answer to reach the grant
		// (Release waits only for the masters known to hold it): the
		// master holds the key, so its answer was sent; one more read of
		// every master lets the answer be taken in.
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if l, err := ee.nodes[2].Holder(Ctx(t), k); err == nil && l != nil {
				break
			}
		}
		_, _ = ee.st.Holder(Ctx(t), k)
		before := ee.slow.held()
		errc := make(chan error, 1)
		go func() { errc <- ee.st.Release(Ctx(t), g) }()
		reached := false
		for deadline := time.Now().Add(5 * time.Second); !reached && time.Now().Before(deadline); {
			select {
			case err := <-errc: // the grant lacked the slow master
				if err != nil {
					t.Fatalf("release: %v", err)
				}
				deadline = time.Time{}
			default:
				reached = ee.slow.held() > before
				time.Sleep(time.Millisecond)
			}
		}
		if !reached {
			continue
		}
		// Release waits for every master known to hold the grant: it has
		// not returned while the slow master holds its call, and once it
		// returns the key is free
		// on every master, so Holder sees it free at once.
		select {
		case err := <-errc:
			t.Fatalf("release returned (%v) while the slow master held its call", err)
		default:
		}
		ee.slow.open()
		if err := <-errc; err != nil {
			t.Fatalf("release: %v", err)
		}
		if _, err := ee.st.Holder(Ctx(t), k); !errors.Is(err, leasehold.ErrNotHeld) {
			t.Errorf("Holder after the release: %v, want ErrNotHeld", err)
		}
		ee.free(t, k, "after the release")
		ee.st.Close()
		return
	}
	t.Fatal("no release of 10 reached the slow master")
}

// Another owner holds the two fast masters: the acquire is refused at
// once; the slow master grants it late, and that grant is deleted.
func (e *RedlockEnv) earlyHeld(t *testing.T) {
	ee := e.early(t, core.AcquireScript)
	k := Key(t, "k")
	other := Req(k, 30*time.Second)
	other.Label = "other"
	var tok uint64
	for i, n := range ee.nodes[:2] {
		tk, l, err := n.Acquire(Ctx(t), k, other.Owner, other.Label, 30_000)
		if err != nil || l != nil {
			t.Fatalf("the other owner's lease on master %d: %+v, %v", i, l, err)
		}
		tok = max(tok, tk)
	}
	var err error
	ee.mustReturn(t, "a refused acquire", func() { _, err = ee.st.Acquire(Ctx(t), Req(k, 30*time.Second)) })
	var he *leasehold.HeldError
	if !errors.As(err, &he) || he.Label != "other" || he.Token != 0 && he.Token != tok {
		t.Fatalf("acquire: %v, want a HeldError naming the other owner", err)
	}
	ee.slow.open()
	ee.st.Close()
	if l, err := ee.nodes[2].Holder(Ctx(t), k); err != nil || l != nil {
		t.Errorf("the slow master after Close: %+v, %v; want the late grant deleted", l, err)
	}
}

// The caller gives up while the slow master has not answered (and the
// acquire needs it: another owner holds the first master): the acquire
// returns at once, and what it took is deleted by its tokens.
func (e *RedlockEnv) earlyAbandoned(t *testing.T) {
	ee := e.early(t, core.AcquireScript)
	k := Key(t, "k")
	other := Req(k, 30*time.Second)
	if _, l, err := ee.nodes[0].Acquire(Ctx(t), k, other.Owner, other.Label, 30_000); err != nil || l != nil {
		t.Fatalf("the other owner's lease on master 0: %+v, %v", l, err)
	}
	ctx, cancel := context.WithCancel(Ctx(t))
	var err error
	ee.mustReturn(t, "an abandoned acquire", func() {
		go func() {
			for ee.slow.held() == 0 {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		_, err = ee.st.Acquire(ctx, Req(k, 30*time.Second))
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("acquire: %v, want context.Canceled", err)
	}
	ee.slow.open()
	ee.st.Close()
	for i, n := range ee.nodes {
		l, err := n.Holder(Ctx(t), k)
		if err != nil || i == 0 && (l == nil || l.Owner != other.Owner) || i > 0 && l != nil {
			t.Errorf("master %d after Close: %+v, %v; want the other owner's lease on master 0 and nothing on the others", i, l, err)
		}
	}
}

// Three masters of five have a token counter an hour ahead of the clock (a
// client whose clock was ahead): the first round is refused there, and the
// acquire proposes a token above their counters, which all five grant.
func (e *RedlockEnv) counterAhead(t *testing.T) {
	st := e.open(t)
	k := Key(t, "k")
	ahead := uint64(time.Now().Add(time.Hour).UnixMicro())
	for _, m := range e.Masters[:3] {
		if _, err := m.Command(Ctx(t), "SET", names(t).Counter(k), strconv.FormatUint(ahead, 10)); err != nil {
			t.Fatal(err)
		}
	}
	g, err := st.Acquire(Ctx(t), Req(k, 30*time.Second))
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	if g.Token <= ahead {
		t.Fatalf("token %d, want above the counters' %d", g.Token, ahead)
	}
	if h, err := st.Holder(Ctx(t), k); err != nil || h.Token != g.Token {
		t.Fatalf("Holder = %+v, %v; want token %d", h, err, g.Token)
	}
	if err := st.Release(Ctx(t), g); err != nil {
		t.Fatal(err)
	}
}
