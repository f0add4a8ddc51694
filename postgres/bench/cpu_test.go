package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkCPUPerCycle measures what one acquire+release cycle costs each
// contender in CPU, which the noise of a shared machine disturbs far less
// than throughput: the client process's CPU (getrusage), the server's (all
// PostgreSQL processes, from /proc) and the client's allocations, per
// cycle. At 64 goroutines both cores are busy, so throughput follows the
// sum of the two. The contenders take turns; one op is one round of
// cpuCycles cycles each (split over the goroutines). Use -benchtime Nx.
func BenchmarkCPUPerCycle(b *testing.B) {
	for _, g := range []int{1, 64} {
		b.Run(fmt.Sprintf("distinct-%d", g), func(b *testing.B) {
			tot := map[string]*cpuCost{}
			for round := 0; round < b.N; round++ {
				for j := range contenders {
					c := contenders[(round+j)%len(contenders)]
					r, err := cpuRound(c, g, round)
					if err != nil {
						b.Fatal(err)
					}
					if tot[c.name] == nil {
						tot[c.name] = &cpuCost{}
					}
					tot[c.name].add(r)
				}
			}
			for _, c := range contenders {
				t := tot[c.name]
				n := float64(t.cycles)
				b.ReportMetric(float64(t.client.Microseconds())/n, c.name+"-client-µs/cycle")
				b.ReportMetric(float64(t.server.Microseconds())/n, c.name+"-server-µs/cycle")
				b.ReportMetric(float64(t.mallocs)/n, c.name+"-allocs/cycle")
				b.ReportMetric(n/t.wall.Seconds(), c.name+"-cycles/s")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

// cpuCycles is the number of cycles per contender per round.
const cpuCycles = 3000

type cpuCost struct {
	cycles               int
	client, server, wall time.Duration
	mallocs              uint64
}

func (c *cpuCost) add(o cpuCost) {
	c.cycles += o.cycles
	c.client += o.client
	c.server += o.server
	c.wall += o.wall
	c.mallocs += o.mallocs
}

// cpuRound runs cpuCycles cycles of c over goroutines workers on keys of
// their own and returns what they cost.
func cpuRound(c contender, goroutines, round int) (cpuCost, error) {
	ctx := context.Background()
	workers := make([]worker, goroutines)
	for i := range workers {
		w, err := c.newWorker(ctx, fmt.Sprintf("cpu/%s/%d/%d/%d", c.name, goroutines, round, i))
		if err != nil {
			return cpuCost{}, err
		}
		workers[i] = w
	}
	defer func() {
		for _, w := range workers {
			w.close()
		}
	}()
	per := cpuCycles / goroutines
	errs := make(chan error, goroutines)
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	srv0, err := serverCPU()
	if err != nil {
		return cpuCost{}, err
	}
	cl0, start := clientCPU(), time.Now()
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				ok, err := w.attempt(ctx)
				if err == nil && !ok {
					err = fmt.Errorf("%s: a distinct key was held", c.name)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	wall, cl1 := time.Since(start), clientCPU()
	srv1, err := serverCPU()
	if err != nil {
		return cpuCost{}, err
	}
	runtime.ReadMemStats(&ms1)
	close(errs)
	if err := <-errs; err != nil {
		return cpuCost{}, err
	}
	return cpuCost{cycles: per * goroutines, client: cl1 - cl0, server: srv1 - srv0, wall: wall, mallocs: ms1.Mallocs - ms0.Mallocs}, nil
}

func clientCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serverCPU adds up the user and system CPU of the postmaster and all its
// children (the backends and the background processes).
func serverCPU() (time.Duration, error) {
	b, err := os.ReadFile(filepath.Join(srv.Dir, "data", "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	pm := strings.SplitN(string(b), "\n", 2)[0]
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	var ticks int64
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		st, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The fields after the command (which may hold spaces) start at
		// state: state ppid ... utime (14th field overall) stime (15th).
		s := string(st)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		if len(f) < 13 || (e.Name() != pm && f[1] != pm) {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		k, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += u + k
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil // USER_HZ is 100
}

// BenchmarkSerial runs each contender's acquire+release cycle back to back
// on one goroutine, one cycle per op, for -cpuprofile and -benchmem.
func BenchmarkSerial(b *testing.B) {
	for _, c := range contenders {
		b.Run(c.name, func(b *testing.B) {
			w, err := c.newWorker(context.Background(), fmt.Sprintf("serial/%s/%d", c.name, time.Now().UnixNano()))
			if err != nil {
				b.Fatal(err)
			}
			defer w.close()
			b.ReportAllocs()
			for b.Loop() {
				if ok, err := w.attempt(context.Background()); err != nil || !ok {
					b.Fatal(ok, err)
				}
			}
		})
	}
}
