package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	redsyncgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"

	"github.com/leasehold-go/leasehold"
	lhredis "github.com/leasehold-go/leasehold/redis"
	"github.com/leasehold-go/leasehold/redis/internal/storetest"
)

// held is the number of leases renewed per renew period.
const held = 10_000

// BenchmarkRenew10k measures one renew period of a holder of 10,000 leases
// on one Redis: the period's wall time (ns/op), round trips (script calls
// sent), and CPU of the client process and of the server. leasehold renews
// in batches (RenewMany); bsm/redislock and redsync renew lock by lock,
// here from 64 goroutines.
func BenchmarkRenew10k(b *testing.B) {
	b.Run("leasehold-goredis", func(b *testing.B) { renewLeasehold(b, lhGoredis(b)) })
	b.Run("leasehold-rueidis", func(b *testing.B) { renewLeasehold(b, lhRueidis(b)) })
	b.Run("bsm-redislock", renewBsm)
	b.Run("redsync-1", renewRedsync)
}

func renewLeasehold(b *testing.B, c lhredis.Client) {
	cc := &storetest.CountingClient{Client: c}
	st, err := lhredis.New(cc, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	prefix := fmt.Sprintf("renew/%s/%d", b.Name(), time.Now().UnixNano())
	gs := make([]leasehold.Grant, held)
	parallel(b, held, func(ctx context.Context, i int) error {
		g, err := st.Acquire(ctx, leasehold.AcquireRequest{Key: prefix + "/" + strconv.Itoa(i), Owner: leasehold.NewOwnerID(), Label: "bench", TTL: time.Minute})
		gs[i] = g
		return err
	})
	if _, err := st.RenewMany(context.Background(), gs[:1]); err != nil { // warm the script cache
		b.Fatal(err)
	}
	cc.Calls.Store(0)
	measure(b, func() int64 {
		res, err := st.RenewMany(context.Background(), gs)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
		}
		return 0
	}, &cc.Calls)
}

func renewBsm(b *testing.B) {
	l := redislock.New(goredisClient(b, srv))
	prefix := fmt.Sprintf("renew/%s/%d", b.Name(), time.Now().UnixNano())
	locks := make([]*redislock.Lock, held)
	parallel(b, held, func(ctx context.Context, i int) error {
		lk, err := l.Obtain(ctx, prefix+"/"+strconv.Itoa(i), time.Minute, nil)
		locks[i] = lk
		return err
	})
	var calls atomic.Int64
	measure(b, func() int64 {
		parallel(b, held, func(ctx context.Context, i int) error {
			calls.Add(1)
			return locks[i].Refresh(ctx, time.Minute, nil)
		})
		return 0
	}, &calls)
}

func renewRedsync(b *testing.B) {
	rs := redsync.New(redsyncgoredis.NewPool(goredisClient(b, srv)))
	prefix := fmt.Sprintf("renew/%s/%d", b.Name(), time.Now().UnixNano())
	ms := make([]*redsync.Mutex, held)
	parallel(b, held, func(ctx context.Context, i int) error {
		ms[i] = rs.NewMutex(prefix+"/"+strconv.Itoa(i), redsync.WithExpiry(time.Minute), redsync.WithTries(1))
		return ms[i].TryLockContext(ctx)
	})
	var calls atomic.Int64
	measure(b, func() int64 {
		parallel(b, held, func(ctx context.Context, i int) error {
			calls.Add(1)
			ok, err := ms[i].ExtendContext(ctx)
			if err == nil && !ok {
				err = redsync.ErrExtendFailed
			}
			return err
		})
		return 0
	}, &calls)
}

// parallel runs f for 0..n-1 from 64 goroutines and fails b on an error.
func parallel(b *testing.B, n int, f func(ctx context.Context, i int) error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var first atomic.Value
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := f(context.Background(), i); err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := first.Load().(error); ok {
		b.Fatal(err)
	}
}

// measure runs period b.N times and reports round trips, client CPU and
// server CPU per period.
func measure(b *testing.B, period func() int64, calls *atomic.Int64) {
	calls.Store(0)
	cpu0, srv0 := processCPU(), serverCPU(b)
	b.ResetTimer()
	for range b.N {
		period()
	}
	b.StopTimer()
	cpu1, srv1 := processCPU(), serverCPU(b)
	n := float64(b.N)
	b.ReportMetric(float64(calls.Load())/n, "round-trips/period")
	b.ReportMetric((cpu1-cpu0).Seconds()*1000/n, "client-cpu-ms/period")
	b.ReportMetric((srv1-srv0)*1000/n, "server-cpu-ms/period")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serverCPU reads used_cpu_user + used_cpu_sys (seconds) from INFO CPU.
func serverCPU(b *testing.B) float64 {
	r, err := srv.Command(b.Context(), "INFO", "cpu")
	if err != nil {
		b.Fatal(err)
	}
	var total float64
	for _, line := range strings.Split(r, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (k == "used_cpu_user" || k == "used_cpu_sys") {
			f, _ := strconv.ParseFloat(v, 64)
			total += f
		}
	}
	return total
}
