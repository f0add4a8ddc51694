// Package bench measures a leasehold server (package serve, `leasehold
// serve`) side by side with the stores it serves, against issue 28's
// goals:
//
//   - BenchmarkCycle: acquire+release cycles of a leasehold.Client over the
//     embedded store (SQLite) and over Redis (a redis-server it starts),
//     directly and through a server on a loopback port (a serve.Server in
//     this process, a remote store in front of it), interleaved in rounds.
//     Goals: through the server at most 1.3x the direct cycle's cost at 1
//     goroutine, at least 0.8x its throughput at 64.
//   - BenchmarkHeld: the resident memory of a `leasehold serve` process
//     while 100,000 leases are held through it, on the memory store (whose
//     grants the server keeps) and on the embedded store (portable grants,
//     kept by nobody but the file). Goal: at most 100 MiB.
//   - BenchmarkFanout: 1,000 watch streams (server-sent events) on one key
//     of a `leasehold serve` process on the embedded store; the time from a
//     release's return to each subscriber's receipt. Goal: p99 under 100 ms.
//
// It is its own module so that serve and remote never depend on the stores
// it measures them with. Run everything from this folder:
//
//	GOWORK=off go test -run '^$' -bench . -benchtime 1s -args -rounds 3
//
// The `leasehold serve` process is the binary named by -leasehold, or one
// built from ../../cmd into a temporary folder. After the benchmarks,
// TestMain prints the ratios and the "SUMMARY <id> <value>" lines of
// scripts/bench-page's summary table.
package bench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var (
	rounds       = flag.Int("rounds", 1, "rounds of BenchmarkCycle; the ratios are medians over them")
	leaseholdCmd = flag.String("leasehold", "", "the leasehold command to run as the server of BenchmarkHeld and BenchmarkFanout (default: built from ../../cmd)")
	heldN        = flag.Int("held", 100_000, "leases BenchmarkHeld holds through the server")
	subscribers  = flag.Int("subscribers", 1000, "watch streams of BenchmarkFanout")
)

// tmp is the run's temporary folder: the stores' files, the servers'
// folders, the built leasehold command.
var tmp string

// cleanups are run by TestMain after the benchmarks, last first.
var (
	cleanupsMu sync.Mutex
	cleanups   []func()
)

func atExit(f func()) {
	cleanupsMu.Lock()
	defer cleanupsMu.Unlock()
	cleanups = append(cleanups, f)
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "leasehold-serve-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tmp = dir
	defer os.RemoveAll(dir)
	code := m.Run()
	cleanupsMu.Lock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	cleanupsMu.Unlock()
	printSummary(os.Stdout)
	return code
}

// once runs f the first time it is called, and returns f's result (or
// error) every time: a backend the benchmarks share.
type once[T any] struct {
	o   sync.Once
	v   T
	err error
}

func (o *once[T]) get(f func(ctx context.Context) (T, error)) (T, error) {
	o.o.Do(func() { o.v, o.err = f(context.Background()) })
	return o.v, o.err
}

// path returns name in the run's temporary folder.
func path(name string) string { return filepath.Join(tmp, name) }
