package gocron_test

import (
	"context"
	"errors"
	"testing"
	"time"

	gocronv2 "github.com/go-co-op/gocron/v2"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/election"
	"github.com/leasehold-go/leasehold/fence"
	lhgocron "github.com/leasehold-go/leasehold/gocron"
)

// Two schedulers elect over one sqlite file: at most one leads at a time,
// only the leader's scheduler runs the job, each tick once, and when the
// leader closes its Elector the other takes over and runs the job.
func TestElectorsTakeOver(t *testing.T) {
	path := dbPath(t)
	log := newRunLog()
	els := map[string]*lhgocron.Elector{}
	for _, who := range []string{"a", "b"} {
		c, _ := newClient(t, path, nil)
		el, err := lhgocron.NewElector(c, "gocron/leader", &election.Options{TTL: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = el.Close() })
		els[who] = el
		s := newScheduler(t, gocronv2.WithDistributedElector(el))
		job := el.Guard(func(ctx context.Context) error {
			tok, _ := fence.TokenFrom(ctx)
			log.add(time.Now().Round(time.Second).UTC().Format(time.RFC3339), who)
			if tok == 0 {
				t.Errorf("a guarded job without the epoch")
			}
			return nil
		})
		if _, err := s.NewJob(everySecond(), gocronv2.NewTask(job)); err != nil {
			t.Fatal(err)
		}
		s.Start()
	}
	leader := waitLeader(t, els)
	log.waitTicks(t, 2)
	if err := els[leader].Close(); err != nil {
		t.Fatal(err)
	}
	if err := els[leader].IsLeader(context.Background()); !errors.Is(err, election.ErrNotLeader) {
		t.Fatalf("a closed Elector: IsLeader = %v, want ErrNotLeader", err)
	}
	delete(els, leader)
	next := waitLeader(t, els)
	deadline := time.After(limit)
	for {
		log.mu.Lock()
		ranNext := false
		for _, who := range log.runs {
			ranNext = ranNext || who[0] == next
		}
		log.mu.Unlock()
		if ranNext {
			break
		}
		select {
		case <-log.more:
		case <-deadline:
			t.Fatalf("the new leader %s ran no job within %s", next, limit)
		}
	}
	log.checkOnce(t)
}

// waitLeader waits until one of els leads, checking that no two lead at
// once, and returns its name.
func waitLeader(t *testing.T, els map[string]*lhgocron.Elector) string {
	t.Helper()
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		var leading []string
		for who, el := range els {
			if el.IsLeader(context.Background()) == nil {
				leading = append(leading, who)
			}
		}
		switch len(leading) {
		case 1:
			return leading[0]
		case 0:
		default:
			t.Fatalf("%v lead at once", leading)
		}
	}
	t.Fatalf("no leader within %s", limit)
	return ""
}

// A guarded job refuses to run without the leadership.
func TestElectorGuardWithoutLeadership(t *testing.T) {
	c, _ := newClient(t, dbPath(t), nil)
	// Another holder keeps the election's key, so this Elector never leads.
	if _, err := c.Acquire(context.Background(), "gocron/held", leasehold.AcquireOptions{TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	el, err := lhgocron.NewElector(c, "gocron/held", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer el.Close()
	ran := false
	err = el.Guard(func(context.Context) error { ran = true; return nil })(context.Background())
	if !errors.Is(err, election.ErrNotLeader) || ran {
		t.Fatalf("got %v, ran %v; want ErrNotLeader, not run", err, ran)
	}
}
