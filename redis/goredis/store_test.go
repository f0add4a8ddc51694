package goredis_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leasehold-go/leasehold"
	lhredis "github.com/leasehold-go/leasehold/redis"
	"github.com/leasehold-go/leasehold/redis/goredis"
	"github.com/leasehold-go/leasehold/redis/internal/redistest"
)

func open(t testing.TB) *lhredis.Store {
	t.Helper()
	s, err := goredis.OpenURL(ctxT(t), srv.URL())
	if err != nil {
		t.Fatalf("OpenURL: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s.(*lhredis.Store)
}

func req(key string, ttl time.Duration) leasehold.AcquireRequest {
	return leasehold.AcquireRequest{Key: key, Owner: leasehold.NewOwnerID(), Label: "test", TTL: ttl}
}

func uniq(t testing.TB, name string) string {
	return fmt.Sprintf("%s/%s/%d", t.Name(), name, time.Now().UnixNano())
}

// Restart without persistence: counters are lost, yet every key's next
// token is larger than its last one, because tokens take the larger of the
// counter and the server's clock.
func TestRestartTokensIncrease(t *testing.T) {
	st := open(t)
	const n = 50
	keys := make([]string, n)
	last := make([]uint64, n)
	for i := range keys {
		keys[i] = uniq(t, strconv.Itoa(i))
		for range 3 {
			g, err := st.Acquire(ctxT(t), req(keys[i], 30*time.Second))
			if err != nil {
				t.Fatalf("acquire: %v", err)
			}
			last[i] = g.Token
			if i%2 == 0 { // half released, half still held at the restart
				if err := st.Release(ctxT(t), g); err != nil {
					t.Fatalf("release: %v", err)
				}
			} else {
				break
			}
		}
	}
	restartAll(t, srv)
	if v, err := srv.Command("DBSIZE"); err != nil || v != ":0" {
		t.Fatalf("after the restart DBSIZE = %q, %v; want an empty server", v, err)
	}
	st2 := open(t)
	for i, k := range keys {
		g, err := st2.Acquire(ctxT(t), req(k, 30*time.Second))
		if err != nil {
			t.Fatalf("acquire after restart: %v", err)
		}
		if g.Token <= last[i] {
			t.Fatalf("key %d: token after restart %d not greater than %d", i, g.Token, last[i])
		}
	}
}

// The counter wins over the clock when it is ahead, so tokens never repeat
// even within one microsecond or after the clock steps back while the
// server runs.
func TestTokenCounterAheadOfClock(t *testing.T) {
	st := open(t)
	k := uniq(t, "k")
	ahead := uint64(time.Now().UnixMicro()) + 1_000_000_000_000 // 11.6 days ahead
	if v, err := srv.Command("SET", "leasehold:{"+k+"}:token", strconv.FormatUint(ahead, 10)); err != nil || v != "+OK" {
		t.Fatalf("SET counter: %q, %v", v, err)
	}
	for i := uint64(1); i <= 3; i++ {
		g, err := st.Acquire(ctxT(t), req(k, 30*time.Second))
		if err != nil {
			t.Fatalf("acquire: %v", err)
		}
		if g.Token != ahead+i {
			t.Fatalf("token %d, want the counter + 1 = %d", g.Token, ahead+i)
		}
		if err := st.Release(ctxT(t), g); err != nil {
			t.Fatal(err)
		}
	}
}

// A counter holding garbage is an error naming it, never a token of 0 or 1.
func TestGarbageCounter(t *testing.T) {
	st := open(t)
	for _, v := range []string{"abc", "-5", "1e5", "0x10", " 7", "99999999999999999", "9007199254740993"} {
		k := uniq(t, "k")
		if r, err := srv.Command("SET", "leasehold:{"+k+"}:token", v); err != nil || r != "+OK" {
			t.Fatalf("SET: %q %v", r, err)
		}
		g, err := st.Acquire(ctxT(t), req(k, 30*time.Second))
		if err == nil {
			t.Fatalf("counter %q: acquire granted token %d", v, g.Token)
		}
		if !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), "token counter") || !strings.Contains(err.Error(), srv.Addr()) {
			t.Errorf("counter %q: got %v, want a store error naming the counter and the server", v, err)
		}
		if _, err := st.Holder(ctxT(t), k); !errors.Is(err, leasehold.ErrNotHeld) {
			t.Errorf("counter %q: Holder after the failed acquire: %v, want ErrNotHeld", v, err)
		}
	}
	// A lease key of the wrong type.
	k := uniq(t, "wrongtype")
	if r, err := srv.Command("SET", "leasehold:{"+k+"}:lock", "x"); err != nil || r != "+OK" {
		t.Fatalf("SET: %q %v", r, err)
	}
	if _, err := st.Acquire(ctxT(t), req(k, 30*time.Second)); !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Errorf("lease key of the wrong type: got %v, want a store error with WRONGTYPE", err)
	}
}

// The scripts are called by SHA; after SCRIPT FLUSH (or a restart) the
// store falls back to EVAL, which caches them again.
func TestNoScriptFallback(t *testing.T) {
	st := open(t)
	k := uniq(t, "k")
	if r, err := srv.Command("SCRIPT", "FLUSH"); err != nil || r != "+OK" {
		t.Fatalf("SCRIPT FLUSH: %q %v", r, err)
	}
	g, err := st.Acquire(ctxT(t), req(k, 30*time.Second))
	if err != nil {
		t.Fatalf("acquire after SCRIPT FLUSH: %v", err)
	}
	if r, _ := srv.Command("SCRIPT", "EXISTS", "a"); !strings.HasPrefix(r, "*") {
		t.Fatalf("SCRIPT EXISTS: %q", r)
	}
	if err := st.Release(ctxT(t), g); err != nil {
		t.Fatalf("release after SCRIPT FLUSH: %v", err)
	}
}

// A server that is down: OpenURL fails naming it; a store over a client
// of a dead server fails each call with a store error naming it, and
// nothing is left running (TestMain checks goroutines).
func TestDeadServer(t *testing.T) {
	dead := "127.0.0.1:1"
	if s, err := goredis.OpenURL(ctxT(t), "redis://"+dead); err == nil {
		s.Close()
		t.Fatal("OpenURL of a dead server succeeded")
	} else if !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), dead) {
		t.Fatalf("OpenURL of a dead server: %v, want a store error naming %s", err, dead)
	}
	c := redis.NewClient(&redis.Options{Addr: dead, MaxRetries: -1, DialerRetries: 1})
	defer c.Close()
	st, err := goredis.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	k := uniq(t, "k")
	check := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), dead) || !strings.Contains(err.Error(), "refused") {
			t.Errorf("%s on a dead server: %v, want a store error naming %s and the cause", op, err, dead)
		}
	}
	_, err = st.Acquire(ctxT(t), req(k, time.Second))
	check("acquire", err)
	_, err = st.Holder(ctxT(t), k)
	check("holder", err)
	g := leasehold.Grant{Key: k, Owner: "o", Token: 7, TTL: time.Second}
	_, err = st.Renew(ctxT(t), g)
	check("renew", err)
	check("release", st.Release(ctxT(t), g))
	_, _, err = st.Subscribe(ctxT(t), k)
	check("subscribe", err)
	res, err := st.RenewMany(ctxT(t), []leasehold.Grant{g, g})
	check("renew many", err)
	if len(res) != 2 {
		t.Errorf("RenewMany returned %d results for 2 grants", len(res))
	}
	// Through a client: a clean store error, no lease.
	lc, err := leasehold.New(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	l, err := lc.Acquire(ctxT(t), k, leasehold.AcquireOptions{TTL: time.Second, Wait: time.Second})
	if l != nil || !errors.Is(err, leasehold.ErrStore) {
		t.Fatalf("client acquire on a dead server: %v, %v", l, err)
	}
}

// A server that refuses the password.
func TestAuthRefused(t *testing.T) {
	s, err := redistest.Start(tmp, "--requirepass", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	for _, u := range []string{"redis://" + s.Addr(), "redis://:wrong@" + s.Addr()} {
		st, err := goredis.OpenURL(ctxT(t), u)
		if err == nil {
			st.Close()
			t.Fatalf("OpenURL(%s) with a bad password succeeded", u)
		}
		if !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), s.Addr()) ||
			!(strings.Contains(err.Error(), "NOAUTH") || strings.Contains(err.Error(), "WRONGPASS")) {
			t.Errorf("OpenURL with a bad password: %v, want a store error naming the server and NOAUTH/WRONGPASS", err)
		}
		if strings.Contains(err.Error(), "wrong") {
			t.Errorf("error shows the password: %v", err)
		}
	}
	st, err := goredis.OpenURL(ctxT(t), "redis://:s3cret@"+s.Addr())
	if err != nil {
		t.Fatalf("OpenURL with the password: %v", err)
	}
	defer st.Close()
	g, err := st.Acquire(ctxT(t), req("k", time.Second))
	if err != nil {
		t.Fatalf("acquire with the password: %v", err)
	}
	_ = st.Release(ctxT(t), g)
}

// A read-only replica: acquire fails with READONLY naming the server; the
// holder can still be read there.
func TestReadOnlyReplica(t *testing.T) {
	st := open(t)
	k := uniq(t, "k")
	g, err := st.Acquire(ctxT(t), req(k, 30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Release(ctxT(t), g)
	rep, err := redistest.Start(tmp, "--replicaof", "127.0.0.1", strconv.Itoa(srv.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Stop()
	rs, err := goredis.OpenURL(ctxT(t), rep.URL())
	if err != nil {
		t.Fatalf("OpenURL of the replica: %v", err)
	}
	defer rs.Close()
	// Wait for the replica to sync: it then knows the lease.
	var h leasehold.Holder
	for end := time.Now().Add(20 * time.Second); ; {
		if h, err = rs.Holder(ctxT(t), k); err == nil || time.Now().After(end) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil || h.Token != g.Token {
		t.Fatalf("Holder on the replica: %+v, %v; want token %d", h, err, g.Token)
	}
	_, err = rs.Acquire(ctxT(t), req(uniq(t, "other"), 30*time.Second))
	if !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), "READONLY") || !strings.Contains(err.Error(), rep.Addr()) {
		t.Fatalf("acquire on a replica: %v, want a store error with READONLY naming %s", err, rep.Addr())
	}
}

// countingClient counts script calls, to measure round trips.
type countingClient struct {
	lhredis.Client
	calls atomic.Int64
}

func (c *countingClient) EvalSha(ctx context.Context, sha string, keys, args []string) (any, error) {
	c.calls.Add(1)
	return c.Client.EvalSha(ctx, sha, keys, args)
}

func (c *countingClient) Eval(ctx context.Context, s string, keys, args []string) (any, error) {
	c.calls.Add(1)
	return c.Client.Eval(ctx, s, keys, args)
}

// RenewMany renews 2,500 leases in three script calls (1,000 per call),
// reports per grant, and never renews a grant that is not the caller's.
func TestRenewMany(t *testing.T) {
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rc.Close()
	a, err := goredis.NewClient(rc)
	if err != nil {
		t.Fatal(err)
	}
	cc := &countingClient{Client: a}
	st, err := lhredis.New(cc, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const n = 2500
	gs := make([]leasehold.Grant, n)
	for i := range gs {
		if gs[i], err = st.Acquire(ctxT(t), req(uniq(t, strconv.Itoa(i)), 5*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	// Grant 7 is released, grant 8 carries a stale token, grant 9 a bad TTL.
	if err := st.Release(ctxT(t), gs[7]); err != nil {
		t.Fatal(err)
	}
	gs[8].Token--
	gs[9].TTL = 0
	for i := range gs {
		gs[i].TTL = 60 * time.Second
	}
	gs[9].TTL = 0
	// Warm the script cache (the first call of a script after a restart or
	// SCRIPT FLUSH is a NOSCRIPT answer and an EVAL).
	if _, err := st.RenewMany(ctxT(t), gs[:1]); err != nil {
		t.Fatal(err)
	}
	cc.calls.Store(0)
	res, err := st.RenewMany(ctxT(t), gs)
	if err != nil {
		t.Fatalf("RenewMany: %v", err)
	}
	if got := cc.calls.Load(); got != 3 {
		t.Errorf("RenewMany of %d grants made %d script calls, want 3", n, got)
	}
	for i, r := range res {
		switch i {
		case 7, 8:
			if !errors.Is(r.Err, leasehold.ErrNotHeld) {
				t.Errorf("grant %d: %v, want ErrNotHeld", i, r.Err)
			}
		case 9:
			if !errors.Is(r.Err, leasehold.ErrInvalidTTL) {
				t.Errorf("grant %d: %v, want ErrInvalidTTL", i, r.Err)
			}
		default:
			if r.Err != nil || r.Grant.Token != gs[i].Token || r.Grant.TTL != 60*time.Second {
				t.Fatalf("grant %d: %+v", i, r)
			}
		}
	}
	h, err := st.Holder(ctxT(t), gs[0].Key)
	if err != nil || h.Remaining <= 5*time.Second {
		t.Errorf("after RenewMany to 60s, Holder = %+v, %v", h, err)
	}
	h, err = st.Holder(ctxT(t), gs[8].Key)
	if err != nil || h.Remaining > 5*time.Second {
		t.Errorf("the stale grant's lease was renewed: %+v, %v", h, err)
	}
}

// A waiter wakes on the release notification, not on its backoff: the
// backoff is an hour, so only the notification can get it the key.
func TestWakeOnRelease(t *testing.T) {
	st := open(t)
	testWake(t, st, st)
}

// notifyingStore is the part of a store the wake test needs.
type notifyingStore interface {
	leasehold.Store
	leasehold.Notifier
}

// observed wraps a store to report the first acquire refused as held.
type observed struct {
	notifyingStore
	refused chan struct{}
	once    atomic.Bool
}

func (o *observed) Acquire(ctx context.Context, r leasehold.AcquireRequest) (leasehold.Grant, error) {
	g, err := o.notifyingStore.Acquire(ctx, r)
	if errors.Is(err, leasehold.ErrHeld) && o.once.CompareAndSwap(false, true) {
		close(o.refused)
	}
	return g, err
}

func testWake(t *testing.T, holderStore, waiterStore notifyingStore) {
	k := uniq(t, "k")
	g, err := holderStore.Acquire(ctxT(t), req(k, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	ob := &observed{notifyingStore: waiterStore, refused: make(chan struct{})}
	c, err := leasehold.New(ob, &leasehold.Options{Backoff: leasehold.ConstBackoff(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	type result struct {
		l   *leasehold.Lease
		err error
		at  time.Time
	}
	done := make(chan result, 1)
	go func() {
		l, err := c.Acquire(ctxT(t), k, leasehold.AcquireOptions{TTL: time.Minute, Wait: leasehold.WaitForever})
		done <- result{l, err, time.Now()}
	}()
	// The waiter has subscribed and been refused: it now sleeps for an hour
	// unless the release wakes it.
	select {
	case <-ob.refused:
	case r := <-done:
		t.Fatalf("waiter returned before being refused: %v", r.err)
	}
	released := time.Now()
	if err := holderStore.Release(ctxT(t), g); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("waiter: %v", r.err)
	}
	t.Logf("waiter got the key %s after the release", r.at.Sub(released))
	if err := r.l.Release(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}

// Losing the pub/sub connection wakes every waiter (a release may have
// been missed); the next subscription opens a new connection.
func TestWakeOnConnectionLoss(t *testing.T) {
	st := open(t)
	k := uniq(t, "k")
	ch, cancel, err := st.Subscribe(ctxT(t), k)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	restartAll(t, srv)
	select {
	case <-ch:
	case <-ctxT(t).Done():
		t.Fatal("no wake-up after the server restarted")
	}
	// A new subscription works, on a new connection.
	ch2, cancel2, err := st.Subscribe(ctxT(t), k)
	if err != nil {
		t.Fatalf("subscribe after the restart: %v", err)
	}
	defer cancel2()
	g, err := st.Acquire(ctxT(t), req(k, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Release(ctxT(t), g); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch2:
	case <-ctxT(t).Done():
		t.Fatal("no wake-up on release after the reconnection")
	}
}

// The channel is subscribed while it has waiters and unsubscribed after.
func TestSubscriptionLifetime(t *testing.T) {
	st := open(t)
	k := uniq(t, "k")
	_, c1, err := st.Subscribe(ctxT(t), k)
	if err != nil {
		t.Fatal(err)
	}
	_, c2, err := st.Subscribe(ctxT(t), k)
	if err != nil {
		t.Fatal(err)
	}
	subscribers := func() int64 {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
		defer c.Close()
		m, err := c.PubSubNumSub(ctxT(t), "leasehold:{"+k+"}:free").Result()
		if err != nil {
			t.Fatal(err)
		}
		return m["leasehold:{"+k+"}:free"]
	}
	if n := subscribers(); n != 1 {
		t.Fatalf("two waiters: %d subscriptions, want 1 shared", n)
	}
	c1()
	c2()
	for end := time.Now().Add(10 * time.Second); subscribers() != 0; {
		if time.Now().After(end) {
			t.Fatal("channel still subscribed 10s after its last waiter left")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
