package bench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/etcd"
	"github.com/leasehold-go/leasehold/internal/benchcycle"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/goleak"
	"go.uber.org/zap"
)

// The cluster every benchmark of a run shares. LEASEHOLD_ETCD_BENCH_NODES
// (default 3) sets its size; LEASEHOLD_ETCD_NOFSYNC=1 runs it with
// --unsafe-no-fsync.
var cluster *testserver.Etcd

const ttl = 15 * time.Second

func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		os.Exit(m.Run()) // no benchmarks asked for: do not start etcd
	}
	nodes := 3
	if v := envInt("LEASEHOLD_ETCD_BENCH_NODES"); v > 0 {
		nodes = v
	}
	dir, err := os.MkdirTemp("", "leasehold-etcd-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cluster, err = testserver.StartEtcd(context.Background(), testserver.EtcdOptions{Dir: dir, Nodes: nodes, NoFsync: os.Getenv("LEASEHOLD_ETCD_NOFSYNC") == "1"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	fmt.Printf("etcd cluster: %d nodes, fsync %v, endpoints %v\n", nodes, os.Getenv("LEASEHOLD_ETCD_NOFSYNC") != "1", cluster.Endpoints())
	code := m.Run()
	cluster.Stop()
	os.RemoveAll(dir)
	if err := goleak.Find(); err != nil {
		fmt.Fprintln(os.Stderr, "goroutine leak:", err)
		code = 1
	}
	os.Exit(code)
}

func envInt(name string) int {
	var v int
	_, _ = fmt.Sscan(os.Getenv(name), &v)
	return v
}

func newClient(b *testing.B) *clientv3.Client {
	cli, err := clientv3.New(clientv3.Config{Endpoints: cluster.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cli.Close() })
	return cli
}

var run atomic.Int64

// prefix returns a key prefix unique to this benchmark run.
func prefix(b *testing.B) string {
	return fmt.Sprintf("bench/%d/%s/%d/", os.Getpid(), b.Name(), run.Add(1))
}

// A cycler makes one worker's acquire+release function on key.
type cycler func(b *testing.B, cli *clientv3.Client, key string, hot bool) (cycle func(ctx context.Context) error, done func())

// leaseholdStore: the store's Acquire (AcquireWait on the hot key) and Release.
func leaseholdStore(st *etcd.Store) cycler { return fromImpl(benchcycle.Store(st, ttl)) }

// leaseholdClient: a leasehold.Client over the store (renewal goroutine,
// deadline, release on a detached context).
func leaseholdClient(lc *leasehold.Client) cycler { return fromImpl(benchcycle.Client(lc, ttl)) }

// fromImpl makes a cycler of a internal/benchcycle implementation.
func fromImpl(newCycle func(*testing.B, string, bool) (benchcycle.Cycle, func())) cycler {
	return func(b *testing.B, _ *clientv3.Client, key string, hot bool) (func(context.Context) error, func()) {
		c, done := newCycle(b, key, hot)
		if done == nil {
			done = func() {}
		}
		return c, done
	}
}

// mutex: etcd's concurrency.Mutex, one Session per worker reused across
// cycles (a Mutex's key is its session's lease, so workers on one key need
// their own sessions).
func mutex(b *testing.B, cli *clientv3.Client, key string, _ bool) (func(context.Context) error, func()) {
	sess, err := concurrency.NewSession(cli, concurrency.WithTTL(int(ttl/time.Second)))
	if err != nil {
		b.Fatal(err)
	}
	m := concurrency.NewMutex(sess, key)
	return func(ctx context.Context) error {
		if err := m.Lock(ctx); err != nil {
			return err
		}
		return m.Unlock(ctx)
	}, func() { _ = sess.Close() }
}

// raw is the floor: the put-if-absent transaction on a lease kept alive by
// the client, then a delete; on a held key, a watch for the delete.
func raw(lease clientv3.LeaseID) cycler {
	return func(b *testing.B, cli *clientv3.Client, key string, _ bool) (func(context.Context) error, func()) {
		return func(ctx context.Context) error {
			for {
				resp, err := cli.Txn(ctx).
					If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
					Then(clientv3.OpPut(key, "raw", clientv3.WithLease(lease))).
					Else(clientv3.OpGet(key)).Commit()
				if err != nil {
					return err
				}
				if resp.Succeeded {
					break
				}
				if err := waitDelete(ctx, cli, key, resp.Header.Revision); err != nil {
					return err
				}
			}
			_, err := cli.Delete(ctx, key)
			return err
		}, func() {}
	}
}

func waitDelete(ctx context.Context, cli *clientv3.Client, key string, rev int64) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for resp := range cli.Watch(wctx, key, clientv3.WithRev(rev+1), clientv3.WithFilterPut()) {
		if err := resp.Err(); err != nil {
			return err
		}
		for _, ev := range resp.Events {
			if ev.Type == mvccpb.DELETE {
				return nil
			}
		}
	}
	return ctx.Err()
}

// cycles runs b.N acquire+release cycles on workers goroutines, on distinct
// keys or on one hot key, and reports cycles/s and the p50/p99 latency of a
// cycle.
func cycles(b *testing.B, cli *clientv3.Client, c cycler, workers int, hot bool) {
	pfx := prefix(b)
	fns := make([]benchcycle.Cycle, workers)
	for i := range workers {
		k := pfx + fmt.Sprint(i)
		if hot {
			k = pfx + "hot"
		}
		fn, done := c(b, cli, k, hot)
		defer done()
		fns[i] = fn
	}
	benchcycle.Drive(b, b.Name(), fns)
}

// cycleFixture is what the cycle benchmarks share: a client, a store and a
// leasehold.Client over it, and a kept-alive etcd lease for the raw
// implementation, all closed when b ends.
func cycleFixture(b *testing.B) (*clientv3.Client, *etcd.Store, *leasehold.Client, clientv3.LeaseID) {
	cli := newClient(b)
	st := etcd.New(cli, nil)
	b.Cleanup(func() { _ = st.Close() })
	lc, err := leasehold.New(st, &leasehold.Options{Label: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = lc.Close() })
	lease, err := cli.Grant(context.Background(), int64(ttl/time.Second))
	if err != nil {
		b.Fatal(err)
	}
	kctx, kcancel := context.WithCancel(context.Background())
	b.Cleanup(kcancel)
	ka, err := cli.KeepAlive(kctx, lease.ID)
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		for range ka { //nolint:revive // drain keepalive responses
		}
	}()
	return cli, st, lc, lease.ID
}

// BenchmarkCycle compares acquire+release cycles of the four
// implementations on 1, 8 and 64 workers with distinct keys and 8 workers
// on one hot key. Run with e.g. -bench Cycle -benchtime 3s.
func BenchmarkCycle(b *testing.B) {
	cli, st, lc, lease := cycleFixture(b)
	impls := []struct {
		name string
		c    cycler
	}{
		{"raw", raw(lease)},
		{"leasehold", leaseholdStore(st)},
		{"mutex", mutex},
		{"leasehold-client", leaseholdClient(lc)},
	}
	for _, sc := range []struct {
		name    string
		workers int
		hot     bool
	}{{"distinct-1", 1, false}, {"distinct-8", 8, false}, {"distinct-64", 64, false}, {"hot-8", 8, true}} {
		for _, im := range impls {
			b.Run(sc.name+"/"+im.name, func(b *testing.B) { cycles(b, cli, im.c, sc.workers, sc.hot) })
		}
	}
}

// BenchmarkWakeup measures the time from a holder's release call to a
// waiting acquirer's success (watch wake-up), for leasehold's FIFO
// AcquireWait, concurrency.Mutex and the raw watch loop.
func BenchmarkWakeup(b *testing.B) {
	cli := newClient(b)
	st := etcd.New(cli, nil)
	defer st.Close()
	lease, err := cli.Grant(context.Background(), int64(ttl/time.Second))
	if err != nil {
		b.Fatal(err)
	}
	defer cli.Revoke(context.Background(), lease.ID)
	type pair struct {
		hold    func(ctx context.Context) (release func() error, err error)
		acquire func(ctx context.Context) (release func() error, err error)
	}
	mk := map[string]func(b *testing.B, key string) (pair, func()){
		"leasehold": func(b *testing.B, key string) (pair, func()) {
			f := func(ctx context.Context) (func() error, error) {
				req := leasehold.AcquireRequest{Key: key, Owner: leasehold.NewOwnerID(), TTL: ttl}
				g, err := st.AcquireWait(ctx, req)
				return func() error { return st.Release(ctx, g) }, err
			}
			return pair{f, f}, func() {}
		},
		"mutex": func(b *testing.B, key string) (pair, func()) {
			s1, err1 := concurrency.NewSession(cli, concurrency.WithTTL(int(ttl/time.Second)))
			s2, err2 := concurrency.NewSession(cli, concurrency.WithTTL(int(ttl/time.Second)))
			if err1 != nil || err2 != nil {
				b.Fatal(err1, err2)
			}
			m1, m2 := concurrency.NewMutex(s1, key), concurrency.NewMutex(s2, key)
			f := func(m *concurrency.Mutex) func(ctx context.Context) (func() error, error) {
				return func(ctx context.Context) (func() error, error) {
					err := m.Lock(ctx)
					return func() error { return m.Unlock(ctx) }, err
				}
			}
			return pair{f(m1), f(m2)}, func() { _ = s1.Close(); _ = s2.Close() }
		},
		"raw": func(b *testing.B, key string) (pair, func()) {
			f := func(ctx context.Context) (func() error, error) {
				for {
					resp, err := cli.Txn(ctx).
						If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
						Then(clientv3.OpPut(key, "raw", clientv3.WithLease(lease.ID))).
						Else(clientv3.OpGet(key)).Commit()
					if err != nil {
						return nil, err
					}
					if resp.Succeeded {
						return func() error { _, err := cli.Delete(ctx, key); return err }, nil
					}
					if err := waitDelete(ctx, cli, key, resp.Header.Revision); err != nil {
						return nil, err
					}
				}
			}
			return pair{f, f}, func() {}
		},
	}
	for _, name := range []string{"raw", "leasehold", "mutex"} {
		b.Run(name, func(b *testing.B) {
			key := prefix(b) + "k"
			p, done := mk[name](b, key)
			defer done()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			var lat []time.Duration
			for i := 0; i < b.N; i++ {
				release, err := p.hold(ctx)
				if err != nil {
					b.Fatal(err)
				}
				type res struct {
					at      time.Time
					release func() error
					err     error
				}
				got := make(chan res, 1)
				go func() {
					r, err := p.acquire(ctx)
					got <- res{time.Now(), r, err}
				}()
				time.Sleep(20 * time.Millisecond) // the waiter is queued and watching
				t0 := time.Now()
				if err := release(); err != nil {
					b.Fatal(err)
				}
				r := <-got
				if r.err != nil {
					b.Fatal(r.err)
				}
				lat = append(lat, r.at.Sub(t0))
				if err := r.release(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			benchcycle.ReportPercentiles(b, lat, "wake-")
		})
	}
}

// BenchmarkHold10k measures holding 10,000 leases at once: the time to
// acquire them (64 workers), the holder's heap per lease, the etcd leases
// used, and one batched renewal of all of them. Run with -benchtime 1x.
func BenchmarkHold10k(b *testing.B) {
	const n, workers = 10000, 64
	for _, name := range []string{"leasehold", "mutex"} {
		b.Run(name, func(b *testing.B) {
			for range b.N {
				hold(b, name, n, workers)
			}
		})
	}
}

func heap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// leasesUnder returns how many distinct etcd leases the keys under pfx are on.
func leasesUnder(b *testing.B, cli *clientv3.Client, pfx string) int {
	r, err := cli.Get(context.Background(), pfx, clientv3.WithPrefix())
	if err != nil {
		b.Fatal(err)
	}
	ids := map[int64]bool{}
	for _, kv := range r.Kvs {
		ids[kv.Lease] = true
	}
	return len(ids)
}

func hold(b *testing.B, name string, n, workers int) {
	cli := newClient(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	pfx := prefix(b)
	h0 := heap()
	var next atomic.Int64
	var wg sync.WaitGroup
	var fail atomic.Value
	start := time.Now()
	switch name {
	case "leasehold":
		st := etcd.New(cli, nil)
		defer st.Close()
		gs := make([]leasehold.Grant, n)
		for range workers {
			wg.Go(func() {
				for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
					g, err := st.Acquire(ctx, leasehold.AcquireRequest{Key: fmt.Sprint(pfx, i), Owner: leasehold.NewOwnerID(), TTL: ttl})
					if err != nil {
						fail.CompareAndSwap(nil, err)
						return
					}
					gs[i] = g
				}
			})
		}
		wg.Wait()
		if err, _ := fail.Load().(error); err != nil {
			b.Fatal(err)
		}
		acquired := time.Since(start)
		perLease := float64(int64(heap())-int64(h0)) / float64(n)
		leases := leasesUnder(b, cli, etcd.DefaultPrefix+strings.ReplaceAll(pfx, "/", "%2F"))
		t0 := time.Now()
		res, err := st.RenewMany(ctx, gs)
		if err != nil {
			b.Fatal(err)
		}
		renew := time.Since(t0)
		for _, r := range res {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
		}
		report(b, n, acquired, perLease, leases)
		b.ReportMetric(float64(renew.Milliseconds()), "renew-all-ms")
		for _, g := range gs {
			wg.Go(func() { _ = st.Release(ctx, g) })
			if next.Add(1)%256 == 0 {
				wg.Wait()
			}
		}
		wg.Wait()
	case "mutex":
		sess, err := concurrency.NewSession(cli, concurrency.WithTTL(int(ttl/time.Second)))
		if err != nil {
			b.Fatal(err)
		}
		defer sess.Close()
		ms := make([]*concurrency.Mutex, n)
		for range workers {
			wg.Go(func() {
				for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
					m := concurrency.NewMutex(sess, fmt.Sprint(pfx, i))
					if err := m.Lock(ctx); err != nil {
						fail.CompareAndSwap(nil, err)
						return
					}
					ms[i] = m
				}
			})
		}
		wg.Wait()
		if err, _ := fail.Load().(error); err != nil {
			b.Fatal(err)
		}
		acquired := time.Since(start)
		perLease := float64(int64(heap())-int64(h0)) / float64(n)
		leases := leasesUnder(b, cli, pfx)
		report(b, n, acquired, perLease, leases)
		// A Mutex is renewed by its session's keepalive only: nothing to
		// batch. The session's Close revokes its lease and every key.
	}
}

func report(b *testing.B, n int, acquired time.Duration, perLease float64, leases int) {
	b.ReportMetric(float64(n)/acquired.Seconds(), "acquires/s")
	b.ReportMetric(perLease, "heap-B/lease")
	b.ReportMetric(float64(leases), "etcd-leases")
}
