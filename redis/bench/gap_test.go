package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/redis/internal/core"
)

// gapBlock is the cycles of one implementation between two readings of the
// counters (client CPU, server CPU, allocations, commands).
const gapBlock = 200

// gapImpl is one implementation of BenchmarkGap: acquire takes key and
// returns the release of what it got.
type gapImpl struct {
	name    string
	acquire func(ctx context.Context, key string) (release func(context.Context) error, err error)
}

// gapStats is what BenchmarkGap measured of one implementation.
type gapStats struct {
	cycle, acq, rel []time.Duration
	client          time.Duration // the test process's CPU (user + system)
	server          float64       // redis-server's main thread, seconds
	mallocs         uint64
	calls           map[string]float64
	n               int
}

// BenchmarkGap breaks down the 1-goroutine gap between leasehold over
// go-redis and bsm/redislock: the same cycles as BenchmarkCycle's g1 (one
// goroutine, distinct keys), interleaved so that the machine's load drifts
// over every implementation alike. Each round has two phases. The latency
// phase runs 200 cycles of each implementation one cycle at a time in turn
// (A B C ... A B C ...), for the p50 of the cycle, of its acquire and of its
// release. The cost phase runs a block of 200 cycles of each, starting with
// the next implementation every round, and reads around each block the
// client process's CPU, redis-server's main-thread CPU, the client's heap
// allocations and the commands the server ran. Next to bsm, the floor, the
// store and the Client, it runs the store's two scripts sent straight from
// go-redis (no store code around them), so that the store's Go code shows
// apart from its scripts. One op is one round; it prints "GAP <impl> ..."
// lines and "SUMMARY redis-gap-1-<part> <value>" lines for
// scripts/bench-page: the store's excess over bsm per cycle, by part.
//
//	GOWORK=off go test -run '^$' -bench Gap -benchtime 100x
func BenchmarkGap(b *testing.B) {
	ctx := context.Background()
	admin := goredisClient(b, srv)
	impls := gapImpls(b)
	stats := make([]*gapStats, len(impls))
	for i := range stats {
		stats[i] = &gapStats{calls: map[string]float64{}}
	}
	for r := range b.N {
		prefix := fmt.Sprintf("bench/gap/%d/%d/", b.N, r)
		if err := gapLatency(ctx, impls, stats, prefix+"latency/"); err != nil {
			b.Fatal(err)
		}
		for k := range impls {
			i := (r + k) % len(impls)
			if err := gapCost(ctx, b, admin, impls[i], stats[i], prefix+impls[i].name+"/"); err != nil {
				b.Fatalf("%s: %v", impls[i].name, err)
			}
		}
	}
	b.ReportMetric(0, "ns/op")
	byName := map[string]*gapStats{}
	for i, im := range impls {
		s := stats[i]
		byName[im.name] = s
		fmt.Printf("GAP %-20s cycle p50 %6.1f µs  acquire p50 %6.1f µs  release p50 %6.1f µs  client CPU %6.1f µs  server CPU %6.1f µs  allocs %5.1f  %s\n",
			im.name, p50us(s.cycle), p50us(s.acq), p50us(s.rel), s.clientUS(), s.serverUS(), s.allocs(), formatCalls(s.calls))
	}
	if b.N < 10 { // the probing run, or too few rounds to print figures from
		return
	}
	st, bsm, scripts, cl := byName["leasehold-goredis"], byName["bsm-redislock"], byName["leasehold-scripts"], byName["lh-client-goredis"]
	fmt.Printf("SUMMARY redis-gap-1-cycle-us %.1f\n", p50us(st.cycle)-p50us(bsm.cycle))
	fmt.Printf("SUMMARY redis-gap-1-server-us %.1f\n", st.serverUS()-bsm.serverUS())
	fmt.Printf("SUMMARY redis-gap-1-client-us %.1f\n", st.clientUS()-bsm.clientUS())
	fmt.Printf("SUMMARY redis-gap-1-code-us %.1f\n", p50us(st.cycle)-p50us(scripts.cycle))
	fmt.Printf("SUMMARY redis-gap-1-calls %.2f\n", st.calls["total"]-bsm.calls["total"])
	fmt.Printf("SUMMARY redis-gap-1-client-over-store %.3f\n", p50us(cl.cycle)/p50us(st.cycle))
}

// p50us is the median of d in microseconds.
func p50us(d []time.Duration) float64 {
	v := slices.Clone(d)
	slices.Sort(v)
	return float64(v[len(v)/2].Nanoseconds()) / 1000
}

func (s *gapStats) clientUS() float64 { return float64(s.client.Nanoseconds()) / 1000 / float64(s.n) }
func (s *gapStats) serverUS() float64 { return s.server * 1e6 / float64(s.n) }
func (s *gapStats) allocs() float64   { return float64(s.mallocs) / float64(s.n) }

// cycle runs one acquire+release of im on key and returns how long the
// acquire and the release took.
func (im gapImpl) cycle(ctx context.Context, key string) (acq, rel time.Duration, err error) {
	t0 := time.Now()
	release, err := im.acquire(ctx, key)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", im.name, err)
	}
	t1 := time.Now()
	if err := release(ctx); err != nil {
		return 0, 0, fmt.Errorf("%s: release: %w", im.name, err)
	}
	return t1.Sub(t0), time.Since(t1), nil
}

// gapLatency runs gapBlock cycles of every implementation, one cycle of
// each in turn, on fresh keys under prefix, and records their latencies.
func gapLatency(ctx context.Context, impls []gapImpl, stats []*gapStats, prefix string) error {
	for j := range gapBlock {
		for i, im := range impls {
			acq, rel, err := im.cycle(ctx, prefix+im.name+"/"+strconv.Itoa(j))
			if err != nil {
				return err
			}
			s := stats[i]
			s.acq = append(s.acq, acq)
			s.rel = append(s.rel, rel)
			s.cycle = append(s.cycle, acq+rel)
		}
	}
	return nil
}

// gapCost runs one block of im's cycles on fresh keys under prefix and adds
// what they cost to s.
func gapCost(ctx context.Context, b *testing.B, admin *redis.Client, im gapImpl, s *gapStats, prefix string) error {
	var m0, m1 runtime.MemStats
	calls0 := commandCalls(ctx, b, admin)
	server0 := mainThreadCPU(ctx, b, admin)
	runtime.ReadMemStats(&m0)
	client0 := processCPU()
	for j := range gapBlock {
		if _, _, err := im.cycle(ctx, prefix+strconv.Itoa(j)); err != nil {
			return err
		}
	}
	s.client += processCPU() - client0
	runtime.ReadMemStats(&m1)
	s.server += mainThreadCPU(ctx, b, admin) - server0
	s.mallocs += m1.Mallocs - m0.Mallocs
	for k, v := range perCycle(calls0, commandCalls(ctx, b, admin), gapBlock) {
		s.calls[k] = (s.calls[k]*float64(s.n) + v*gapBlock) / float64(s.n+gapBlock)
	}
	s.n += gapBlock
	return nil
}

// gapImpls are BenchmarkGap's implementations, each with its own go-redis
// client on the one server.
func gapImpls(b *testing.B) []gapImpl {
	raw := goredisClient(b, srv)
	cad := redis.NewScript(cadScript)
	bl := redislock.New(goredisClient(b, srv))
	st := lhStore(b, lhGoredis(b))
	c, err := leasehold.New(lhStore(b, lhGoredis(b)), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return []gapImpl{
		{"raw-goredis", func(ctx context.Context, key string) (func(context.Context) error, error) {
			tok := token()
			if ok, err := raw.SetNX(ctx, key, tok, ttl).Result(); err != nil || !ok {
				return nil, errors.Join(err, errHeld)
			}
			return func(ctx context.Context) error { return cad.Run(ctx, raw, []string{key}, tok).Err() }, nil
		}},
		{"bsm-redislock", func(ctx context.Context, key string) (func(context.Context) error, error) {
			l, err := bl.Obtain(ctx, key, ttl, nil)
			if err != nil {
				return nil, err
			}
			return l.Release, nil
		}},
		{"leasehold-goredis", func(ctx context.Context, key string) (func(context.Context) error, error) {
			g, err := st.Acquire(ctx, leasehold.AcquireRequest{Key: key, Owner: leasehold.NewOwnerID(), Label: "bench", TTL: ttl})
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context) error { return st.Release(ctx, g) }, nil
		}},
		{"leasehold-scripts", scriptsStraight(b)},
		{"lh-client-goredis", func(ctx context.Context, key string) (func(context.Context) error, error) {
			l, err := c.Acquire(ctx, key, leasehold.AcquireOptions{TTL: ttl})
			if err != nil {
				return nil, err
			}
			return l.Release, nil
		}},
	}
}

// scriptsStraight sends the store's acquire and release scripts, with the
// keys and arguments the store sends, straight from go-redis: the store's
// server work and round trips without its Go code.
func scriptsStraight(b *testing.B) func(ctx context.Context, key string) (func(context.Context) error, error) {
	c := goredisClient(b, srv)
	acq, rel := redis.NewScript(core.AcquireScript.Src), redis.NewScript(core.ReleaseScript.Src)
	names, err := core.NewNames("")
	if err != nil {
		b.Fatal(err)
	}
	ms := ttl.Milliseconds()
	return func(ctx context.Context, key string) (func(context.Context) error, error) {
		owner := leasehold.NewOwnerID()
		call := names.AcquireCall(key, owner, "bench", ms, 0)
		a := acq.Run(ctx, c, call.Keys, anyStrings(call.Args)...)
		if err := a.Err(); err != nil {
			return nil, err
		}
		s := grantedToken(a)
		if s == "" {
			return nil, fmt.Errorf("acquire: %v: %w", a.Val(), errHeld)
		}
		tok, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("acquire: token %q: %w", s, err)
		}
		rc := names.ReleaseCall(key, owner, tok)
		return func(ctx context.Context) error {
			n, err := rel.Run(ctx, c, rc.Keys, anyStrings(rc.Args)...).Int()
			if err == nil && n != 1 {
				err = fmt.Errorf("release: %d", n)
			}
			return err
		}, nil
	}
}

func anyStrings(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
