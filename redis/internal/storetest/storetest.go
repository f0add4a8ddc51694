// Package storetest holds the redis and redlock stores' tests that do not
// depend on the client library, so that the goredis and rueidis modules
// run the same checks against real redis-server processes.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/leasetest"
	lhredis "github.com/leasehold-go/leasehold/redis"
)

// Env is what the tests need from an adapter module.
type Env struct {
	// Server is the redis-server of the tests; some restart it.
	Server *testserver.Redis
	// Dir holds the folders of servers the tests start.
	Dir string
	// OpenURL is the adapter's OpenURL.
	OpenURL func(ctx context.Context, rawURL string) (leasehold.Store, error)
	// NewClient returns an adapter over a new client of the server at
	// addr; the client is closed when t ends.
	NewClient func(t testing.TB, addr string) lhredis.Client
}

// Run runs every test of the redis store.
func Run(t *testing.T, env Env) {
	e := &env
	for _, tc := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"conformance_openurl_with_restarts", e.conformanceOpenURL},
		{"conformance_user_client", e.conformanceUserClient},
		{"restart_without_persistence_tokens_increase", e.restartTokens},
		{"token_counter_ahead_of_clock_wins", e.counterAhead},
		{"garbage_counter_is_an_error", e.garbageCounter},
		{"noscript_falls_back_to_eval", e.noScript},
		{"dead_server_clean_errors", e.deadServer},
		{"auth_refused", e.authRefused},
		{"read_only_replica", e.readOnlyReplica},
		{"renew_many_round_trips_and_results", e.renewMany},
		{"waiter_wakes_on_release_not_backoff", e.wakeOnRelease},
		{"connection_loss_wakes_waiters", e.wakeOnConnectionLoss},
		{"subscription_shared_and_dropped", e.subscriptionLifetime},
		{"info_reports_safe_tokens_with_caveat", e.info},
		{"list_by_prefix", e.list},
	} {
		t.Run(tc.name, tc.fn)
	}
}

// Ctx returns a context that ends with t, after a minute at most.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Req is an acquire request with a new owner.
func Req(key string, ttl time.Duration) leasehold.AcquireRequest {
	return leasehold.AcquireRequest{Key: key, Owner: leasehold.NewOwnerID(), Label: "test", TTL: ttl}
}

// Key returns a key unique to t.
func Key(t testing.TB, name string) string {
	return fmt.Sprintf("%s/%s/%d", t.Name(), name, time.Now().UnixNano())
}

// Restart restarts servers without persistence.
func Restart(t testing.TB, ss ...*testserver.Redis) {
	t.Helper()
	for _, s := range ss {
		if err := s.Restart(Ctx(t)); err != nil {
			t.Fatalf("restart redis-server on %s: %v", s.Addr(), err)
		}
	}
}

func (e *Env) open(t testing.TB) *lhredis.Store {
	t.Helper()
	s, err := e.OpenURL(Ctx(t), e.Server.URL())
	if err != nil {
		t.Fatalf("OpenURL: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s.(*lhredis.Store)
}

func (e *Env) command(t testing.TB, s *testserver.Redis, args ...string) string {
	t.Helper()
	r, err := s.Command(Ctx(t), args...)
	if err != nil {
		t.Fatalf("%s on %s: %v", strings.Join(args, " "), s.Addr(), err)
	}
	return r
}

// shortTTL is the suites' expiry and renewal TTL: 300 ms (the suite's
// default) leaves a renewal 200 ms, which a loaded two-core machine under
// the race detector sometimes misses.
const shortTTL = time.Second

func (e *Env) conformanceOpenURL(t *testing.T) {
	leasetest.Run(t, leasetest.Config{
		ShortTTL: shortTTL,
		Open:     func(t testing.TB) leasehold.Store { return e.open(t) },
		Restart:  func(t testing.TB) { Restart(t, e.Server) },
	})
}

// The store over a client the caller owns: closing the store leaves the
// client open.
func (e *Env) conformanceUserClient(t *testing.T) {
	c := e.NewClient(t, e.Server.Addr())
	warm(t, c)
	leasetest.Run(t, leasetest.Config{
		ShortTTL: shortTTL,
		Open: func(t testing.TB) leasehold.Store {
			s, err := lhredis.New(c, &lhredis.Options{Prefix: "user-client:"})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			return s
		},
	})
	s, err := lhredis.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Holder(Ctx(t), "k"); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("the caller's client after the stores closed: %v", err)
	}
}

// warm makes c start the goroutines it starts on first concurrent use
// (rueidis's pipelines), so that the suite's leak check, which ignores the
// goroutines present when it starts, does not count the caller's client.
func warm(t *testing.T, c lhredis.Client) {
	s, err := lhredis.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = s.Holder(Ctx(t), "warm-up")
		}()
	}
	wg.Wait()
}

// Restart without persistence: counters are lost, yet every key's next
// token is larger than its last one, because tokens take the larger of the
// counter and the server's clock.
func (e *Env) restartTokens(t *testing.T) {
	st := e.open(t)
	const n = 50
	keys := make([]string, n)
	last := make([]uint64, n)
	for i := range keys {
		keys[i] = Key(t, strconv.Itoa(i))
		for range 3 {
			g, err := st.Acquire(Ctx(t), Req(keys[i], 30*time.Second))
			if err != nil {
				t.Fatalf("acquire: %v", err)
			}
			last[i] = g.Token
			if i%2 == 1 { // half still held at the restart
				break
			}
			if err := st.Release(Ctx(t), g); err != nil {
				t.Fatalf("release: %v", err)
			}
		}
	}
	Restart(t, e.Server)
	if v := e.command(t, e.Server, "DBSIZE"); v != ":0" {
		t.Fatalf("after the restart DBSIZE = %s; want an empty server", v)
	}
	st2 := e.open(t)
	for i, k := range keys {
		g, err := st2.Acquire(Ctx(t), Req(k, 30*time.Second))
		if err != nil {
			t.Fatalf("acquire after restart: %v", err)
		}
		if g.Token <= last[i] {
			t.Fatalf("key %d: token after restart %d not greater than %d", i, g.Token, last[i])
		}
	}
}

// The counter wins over the clock when it is ahead, so tokens never repeat
// within a microsecond or after the clock steps back while the server runs.
func (e *Env) counterAhead(t *testing.T) {
	st := e.open(t)
	k := Key(t, "k")
	ahead := uint64(time.Now().UnixMicro()) + 1_000_000_000_000 // 11.6 days ahead
	if v := e.command(t, e.Server, "SET", "leasehold:{"+k+"}:token", strconv.FormatUint(ahead, 10)); v != "+OK" {
		t.Fatalf("SET counter: %s", v)
	}
	for i := uint64(1); i <= 3; i++ {
		g, err := st.Acquire(Ctx(t), Req(k, 30*time.Second))
		if err != nil {
			t.Fatalf("acquire: %v", err)
		}
		if g.Token != ahead+i {
			t.Fatalf("token %d, want the counter + 1 = %d", g.Token, ahead+i)
		}
		if err := st.Release(Ctx(t), g); err != nil {
			t.Fatal(err)
		}
	}
}

// A counter holding garbage is an error naming it, never a token of 0 or 1;
// a lease key of the wrong type is an error too.
func (e *Env) garbageCounter(t *testing.T) {
	st := e.open(t)
	for _, v := range []string{"abc", "-5", "1e5", "0x10", " 7", "", "99999999999999999", "9007199254740993"} {
		k := Key(t, "k")
		if r := e.command(t, e.Server, "SET", "leasehold:{"+k+"}:token", v); r != "+OK" {
			t.Fatalf("SET: %s", r)
		}
		g, err := st.Acquire(Ctx(t), Req(k, 30*time.Second))
		if err == nil {
			t.Fatalf("counter %q: acquire granted token %d", v, g.Token)
		}
		if !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), "token counter") || !strings.Contains(err.Error(), e.Server.Addr()) {
			t.Errorf("counter %q: got %v, want a store error naming the counter and the server", v, err)
		}
		if _, err := st.Holder(Ctx(t), k); !errors.Is(err, leasehold.ErrNotHeld) {
			t.Errorf("counter %q: Holder after the failed acquire: %v, want ErrNotHeld", v, err)
		}
	}
	// A lease key holding a foreign string, or a value of the wrong type.
	k := Key(t, "foreign")
	if r := e.command(t, e.Server, "SET", "leasehold:{"+k+"}:lock", "x"); r != "+OK" {
		t.Fatalf("SET: %s", r)
	}
	if _, err := st.Acquire(Ctx(t), Req(k, 30*time.Second)); !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), "not a leasehold lease") {
		t.Errorf("lease key holding a foreign value: got %v, want a store error saying so", err)
	}
	if _, err := st.Holder(Ctx(t), k); !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), "not a leasehold lease") {
		t.Errorf("Holder of a lease key holding a foreign value: got %v, want a store error saying so", err)
	}
	k = Key(t, "wrongtype")
	if r := e.command(t, e.Server, "HSET", "leasehold:{"+k+"}:lock", "f", "v"); r != ":1" {
		t.Fatalf("HSET: %s", r)
	}
	if _, err := st.Acquire(Ctx(t), Req(k, 30*time.Second)); !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Errorf("lease key of the wrong type: got %v, want a store error with WRONGTYPE", err)
	}
}

// The scripts are called by SHA; after SCRIPT FLUSH (or a restart) the
// store falls back to EVAL, which caches them again.
func (e *Env) noScript(t *testing.T) {
	st := e.open(t)
	k := Key(t, "k")
	if r := e.command(t, e.Server, "SCRIPT", "FLUSH"); r != "+OK" {
		t.Fatalf("SCRIPT FLUSH: %s", r)
	}
	g, err := st.Acquire(Ctx(t), Req(k, 30*time.Second))
	if err != nil {
		t.Fatalf("acquire after SCRIPT FLUSH: %v", err)
	}
	if err := st.Release(Ctx(t), g); err != nil {
		t.Fatalf("release after SCRIPT FLUSH: %v", err)
	}
}

// A server that dies under a store: each call fails with a store error
// naming the server and the cause; a client's acquire fails the same way
// and holds nothing. OpenURL of a dead address fails naming it.
func (e *Env) deadServer(t *testing.T) {
	dead := "127.0.0.1:1"
	if s, err := e.OpenURL(Ctx(t), "redis://"+dead); err == nil {
		s.Close()
		t.Fatal("OpenURL of a dead server succeeded")
	} else if !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), dead) {
		t.Fatalf("OpenURL of a dead server: %v, want a store error naming %s", err, dead)
	}

	srv, err := testserver.StartRedis(Ctx(t), testserver.RedisOptions{Dir: e.Dir})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	st, err := lhredis.New(e.NewClient(t, srv.Addr()), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	k := Key(t, "k")
	g, err := st.Acquire(Ctx(t), Req(k, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	check := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), srv.Addr()) {
			t.Errorf("%s on a dead server: %v, want a store error naming %s", op, err, srv.Addr())
		}
	}
	_, err = st.Acquire(Ctx(t), Req(k, time.Second))
	check("acquire", err)
	_, err = st.Holder(Ctx(t), k)
	check("holder", err)
	_, err = st.Renew(Ctx(t), g)
	check("renew", err)
	check("release", st.Release(Ctx(t), g))
	_, _, err = st.Subscribe(Ctx(t), k)
	check("subscribe", err)
	res, err := st.RenewMany(Ctx(t), []leasehold.Grant{g, g})
	check("renew many", err)
	if len(res) != 2 {
		t.Errorf("RenewMany returned %d results for 2 grants", len(res))
	}
	lc, err := leasehold.New(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	l, err := lc.Acquire(Ctx(t), k, leasehold.AcquireOptions{TTL: time.Second, Wait: time.Second})
	if l != nil || !errors.Is(err, leasehold.ErrStore) {
		t.Fatalf("client acquire on a dead server: %v, %v; want no lease and ErrStore", l, err)
	}
}

// A server that refuses the password: OpenURL fails naming the server and
// the cause, without showing the password.
func (e *Env) authRefused(t *testing.T) {
	s, err := testserver.StartRedis(Ctx(t), testserver.RedisOptions{Dir: e.Dir, Args: []string{"--requirepass", "s3cret"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	for _, u := range []string{"redis://" + s.Addr(), "redis://:badpass@" + s.Addr()} {
		st, err := e.OpenURL(Ctx(t), u)
		if err == nil {
			st.Close()
			t.Fatalf("OpenURL(%s) with a bad password succeeded", u)
		}
		if !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), s.Addr()) ||
			!(strings.Contains(err.Error(), "NOAUTH") || strings.Contains(err.Error(), "WRONGPASS")) {
			t.Errorf("OpenURL with a bad password: %v, want a store error naming the server and NOAUTH/WRONGPASS", err)
		}
		if strings.Contains(err.Error(), "badpass") {
			t.Errorf("error shows the password: %v", err)
		}
	}
	st, err := e.OpenURL(Ctx(t), "redis://:s3cret@"+s.Addr())
	if err != nil {
		t.Fatalf("OpenURL with the password: %v", err)
	}
	defer st.Close()
	g, err := st.Acquire(Ctx(t), Req("k", time.Second))
	if err != nil {
		t.Fatalf("acquire with the password: %v", err)
	}
	_ = st.Release(Ctx(t), g)
}

// A read-only replica: acquire fails with READONLY naming the server; the
// holder can still be read there.
func (e *Env) readOnlyReplica(t *testing.T) {
	st := e.open(t)
	k := Key(t, "k")
	g, err := st.Acquire(Ctx(t), Req(k, 30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Release(Ctx(t), g)
	rep, err := testserver.StartRedis(Ctx(t), testserver.RedisOptions{Dir: e.Dir, Args: []string{"--replicaof", "127.0.0.1", strconv.Itoa(e.Server.Port)}})
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Stop()
	rs, err := e.OpenURL(Ctx(t), rep.URL())
	if err != nil {
		t.Fatalf("OpenURL of the replica: %v", err)
	}
	defer rs.Close()
	// Wait for the replica to sync (set-up, not a measurement).
	for end := time.Now().Add(30 * time.Second); e.command(t, rep, "EXISTS", "leasehold:{"+k+"}:lock") != ":1"; {
		if time.Now().After(end) {
			t.Fatal("replica not in sync after 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if h, err := rs.Holder(Ctx(t), k); err != nil || h.Token != g.Token {
		t.Fatalf("Holder on the replica: %+v, %v; want token %d", h, err, g.Token)
	}
	_, err = rs.Acquire(Ctx(t), Req(Key(t, "other"), 30*time.Second))
	if !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), "READONLY") || !strings.Contains(err.Error(), rep.Addr()) {
		t.Fatalf("acquire on a replica: %v, want a store error with READONLY naming %s", err, rep.Addr())
	}
}

// CountingClient counts script calls: round trips, for the tests and the
// benchmarks.
type CountingClient struct {
	lhredis.Client
	Calls atomic.Int64
}

// EvalSha counts and forwards.
func (c *CountingClient) EvalSha(ctx context.Context, sha string, keys, args []string) (any, error) {
	c.Calls.Add(1)
	return c.Client.EvalSha(ctx, sha, keys, args)
}

// Eval counts and forwards.
func (c *CountingClient) Eval(ctx context.Context, s string, keys, args []string) (any, error) {
	c.Calls.Add(1)
	return c.Client.Eval(ctx, s, keys, args)
}

// RenewMany renews 2,500 leases in three script calls (1,000 per call),
// reports per grant, and never renews a grant that is not the caller's.
func (e *Env) renewMany(t *testing.T) {
	cc := &CountingClient{Client: e.NewClient(t, e.Server.Addr())}
	st, err := lhredis.New(cc, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const n = 2500
	gs := make([]leasehold.Grant, n)
	for i := range gs {
		if gs[i], err = st.Acquire(Ctx(t), Req(Key(t, strconv.Itoa(i)), 5*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	// Grant 7 is released, grant 8 carries a stale token, grant 9 a bad TTL.
	if err := st.Release(Ctx(t), gs[7]); err != nil {
		t.Fatal(err)
	}
	gs[8].Token--
	for i := range gs {
		gs[i].TTL = 60 * time.Second
	}
	gs[9].TTL = 0
	// Warm the script cache: the first call of a script after a restart
	// or SCRIPT FLUSH is a NOSCRIPT answer and an EVAL.
	if _, err := st.RenewMany(Ctx(t), gs[:1]); err != nil {
		t.Fatal(err)
	}
	cc.Calls.Store(0)
	res, err := st.RenewMany(Ctx(t), gs)
	if err != nil {
		t.Fatalf("RenewMany: %v", err)
	}
	if got := cc.Calls.Load(); got != 3 {
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
	if h, err := st.Holder(Ctx(t), gs[0].Key); err != nil || h.Remaining <= 5*time.Second {
		t.Errorf("after RenewMany to 60s, Holder = %+v, %v", h, err)
	}
	if h, err := st.Holder(Ctx(t), gs[8].Key); err != nil || h.Remaining > 5*time.Second {
		t.Errorf("the stale grant's lease was renewed: %+v, %v", h, err)
	}
}

func (e *Env) wakeOnRelease(t *testing.T) {
	st := e.open(t)
	Wake(t, st, st)
}

// NotifyingStore is a store that can wake waiters.
type NotifyingStore interface {
	leasehold.Store
	leasehold.Notifier
}

// observed wraps a store to report the first acquire refused as held.
type observed struct {
	NotifyingStore
	refused chan struct{}
	once    atomic.Bool
}

func (o *observed) Acquire(ctx context.Context, r leasehold.AcquireRequest) (leasehold.Grant, error) {
	g, err := o.NotifyingStore.Acquire(ctx, r)
	if errors.Is(err, leasehold.ErrHeld) && o.once.CompareAndSwap(false, true) {
		close(o.refused)
	}
	return g, err
}

// Wake checks that a waiter wakes on the release notification, not on
// its backoff: the backoff is an hour, so only the notification can get it
// the key before the test's deadline.
func Wake(t *testing.T, holderStore, waiterStore NotifyingStore) {
	k := Key(t, "k")
	g, err := holderStore.Acquire(Ctx(t), Req(k, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	ob := &observed{NotifyingStore: waiterStore, refused: make(chan struct{})}
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
	ctx := Ctx(t)
	go func() {
		l, err := c.Acquire(ctx, k, leasehold.AcquireOptions{TTL: time.Minute, Wait: leasehold.WaitForever})
		done <- result{l, err, time.Now()}
	}()
	// The waiter has subscribed and been refused: it now sleeps for an
	// hour unless the release wakes it.
	select {
	case <-ob.refused:
	case r := <-done:
		t.Fatalf("waiter returned before being refused: %v", r.err)
	}
	released := time.Now()
	if err := holderStore.Release(Ctx(t), g); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("waiter: %v", r.err)
	}
	t.Logf("waiter got the key %s after the release (information, not asserted)", r.at.Sub(released))
	if err := r.l.Release(Ctx(t)); err != nil {
		t.Fatal(err)
	}
}

// Losing the pub/sub connection wakes every waiter (a release may have
// been missed); the next subscription opens a new connection.
func (e *Env) wakeOnConnectionLoss(t *testing.T) {
	st := e.open(t)
	k := Key(t, "k")
	ch, cancel, err := st.Subscribe(Ctx(t), k)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	Restart(t, e.Server)
	select {
	case <-ch:
	case <-Ctx(t).Done():
		t.Fatal("no wake-up after the server restarted")
	}
	ch2, cancel2, err := st.Subscribe(Ctx(t), k)
	if err != nil {
		t.Fatalf("subscribe after the restart: %v", err)
	}
	defer cancel2()
	// A command on a connection the restart broke may fail (EOF: a client
	// does not resend a write it may have sent); the client's next
	// connection works.
	var g leasehold.Grant
	settle(t, func() (err error) { g, err = st.Acquire(Ctx(t), Req(k, time.Minute)); return err })
	settle(t, func() error { return st.Release(Ctx(t), g) })
	select {
	case <-ch2:
	case <-Ctx(t).Done():
		t.Fatal("no wake-up on release after the reconnection")
	}
}

// settle retries f while it fails with a store error, a few times.
func settle(t *testing.T, f func() error) {
	t.Helper()
	var err error
	for range 5 {
		if err = f(); !errors.Is(err, leasehold.ErrStore) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

// A key's channel is subscribed once for all its waiters, and dropped
// after the last leaves.
func (e *Env) subscriptionLifetime(t *testing.T) {
	st := e.open(t)
	k := Key(t, "k")
	channel := "leasehold:{" + k + "}:free"
	subscribers := func() string { return e.command(t, e.Server, "PUBSUB", "NUMSUB", channel) }
	_, c1, err := st.Subscribe(Ctx(t), k)
	if err != nil {
		t.Fatal(err)
	}
	_, c2, err := st.Subscribe(Ctx(t), k)
	if err != nil {
		t.Fatal(err)
	}
	if n := subscribers(); n != "["+channel+" :1]" {
		t.Fatalf("two waiters: PUBSUB NUMSUB = %s, want one shared subscription", n)
	}
	c1()
	c2()
	for end := time.Now().Add(10 * time.Second); subscribers() != "["+channel+" :0]"; {
		if time.Now().After(end) {
			t.Fatal("channel still subscribed 10s after its last waiter left")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (e *Env) info(t *testing.T) {
	info := e.open(t).Info()
	if info.Name != "redis" || !info.SafeTokens || !strings.Contains(info.TokenCaveat, "clock") {
		t.Fatalf("Info = %+v, want SafeTokens with a caveat naming the clock assumption", info)
	}
}

// List finds the held keys under a prefix, and only those: not a key that
// merely shares a prefix of its storage name, not a released one.
func (e *Env) list(t *testing.T) {
	st := e.open(t)
	base := Key(t, "") + "/"
	keys := []string{"a", "a/x", "a*", "a?", "a[1]", "a{b}", "a%7D", "b", "released"}
	gs := map[string]leasehold.Grant{}
	for _, k := range keys {
		g, err := st.Acquire(Ctx(t), Req(base+k, time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		gs[k] = g
	}
	if err := st.Release(Ctx(t), gs["released"]); err != nil {
		t.Fatal(err)
	}
	for prefix, want := range map[string][]string{
		"a":        {"a", "a%7D", "a*", "a/x", "a?", "a[1]", "a{b}"},
		"a*":       {"a*"},
		"a[":       {"a[1]"},
		"a{":       {"a{b}"},
		"a%":       {"a%7D"},
		"":         {"a", "a%7D", "a*", "a/x", "a?", "a[1]", "a{b}", "b"},
		"released": nil,
		"zzz":      nil,
	} {
		hs, err := st.List(Ctx(t), base+prefix)
		if err != nil {
			t.Fatalf("List(%q): %v", prefix, err)
		}
		var got []string
		for _, h := range hs {
			k := strings.TrimPrefix(h.Key, base)
			got = append(got, k)
			if h.Token != gs[k].Token || h.Label != "test" || h.Remaining <= 0 {
				t.Errorf("List(%q): holder %+v, want token %d", prefix, h, gs[k].Token)
			}
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("List(%q) = %q, want %q", prefix, got, want)
		}
	}
}
