package gocron_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	gocronv2 "github.com/go-co-op/gocron/v2"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/sqlite"
)

// limit bounds every wait for something that must happen (a run, a
// leader): far longer than it takes, so a slow machine does not fail it.
const limit = 60 * time.Second

// dbPath returns a new sqlite file's path for t.
func dbPath(t *testing.T) string {
	return filepath.Join(t.TempDir(), "leases.db")
}

// newClient opens the sqlite store at path and a client over it, both
// closed when t ends.
func newClient(t *testing.T, path string, o *leasehold.Options) (*leasehold.Client, *sqlite.Store) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	c, err := leasehold.New(st, o)
	if err != nil {
		t.Fatalf("leasehold.New: %v", err)
	}
	t.Cleanup(func() {
		_ = c.Close()
		_ = st.Close()
	})
	return c, st
}

// newScheduler returns a started gocron scheduler, shut down when t ends.
func newScheduler(t *testing.T, opts ...gocronv2.SchedulerOption) gocronv2.Scheduler {
	t.Helper()
	s, err := gocronv2.NewScheduler(opts...)
	if err != nil {
		t.Fatalf("gocron.NewScheduler: %v", err)
	}
	t.Cleanup(func() { _ = s.Shutdown() })
	return s
}

// everySecond is a cron schedule with seconds: every scheduler's runs fall
// on the same wall-clock seconds.
func everySecond() gocronv2.JobDefinition { return gocronv2.CronJob("* * * * * *", true) }

// runLog records the runs of a job across schedulers.
type runLog struct {
	mu   sync.Mutex
	runs map[string][]string // tick key -> the schedulers that ran it
	more chan struct{}       // gets a value after each run
}

func newRunLog() *runLog {
	return &runLog{runs: map[string][]string{}, more: make(chan struct{}, 1000)}
}

func (r *runLog) add(key, who string) {
	r.mu.Lock()
	r.runs[key] = append(r.runs[key], who)
	r.mu.Unlock()
	r.more <- struct{}{}
}

// waitTicks waits until n distinct ticks have run, failing after limit.
func (r *runLog) waitTicks(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(limit)
	for {
		r.mu.Lock()
		got := len(r.runs)
		r.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-r.more:
		case <-deadline:
			t.Fatalf("%d ticks ran within %s, want %d", got, limit, n)
		}
	}
}

// checkOnce fails t for every tick run more than once.
func (r *runLog) checkOnce(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, who := range r.runs {
		if len(who) != 1 {
			t.Errorf("tick %s ran %d times, by %v", k, len(who), who)
		}
	}
}
