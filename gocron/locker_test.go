package gocron_test

import (
	"context"
	"errors"
	"testing"
	"time"

	gocronv2 "github.com/go-co-op/gocron/v2"
	"github.com/google/uuid"

	"github.com/leasehold-go/leasehold"
	lhgocron "github.com/leasehold-go/leasehold/gocron"
	"github.com/leasehold-go/leasehold/memory"
)

func TestNewLockerOptions(t *testing.T) {
	c, err := leasehold.New(memory.New(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	at := time.Date(2026, 11, 27, 15, 0, 0, 300_000_000, time.UTC)
	for _, tc := range []struct {
		name    string
		opts    *lhgocron.LockerOptions
		wantKey string // "" when refused
	}{
		{"defaults", nil, "gocron/job"},
		{"prefix", &lhgocron.LockerOptions{Prefix: "cron:"}, "cron:job"},
		{"period_keys_the_tick", &lhgocron.LockerOptions{Period: time.Second}, "gocron/job/2026-11-27T15:00:00Z"},
		{"negative_ttl", &lhgocron.LockerOptions{TTL: -1}, ""},
		{"negative_period", &lhgocron.LockerOptions{Period: -time.Second}, ""},
		{"negative_min_hold", &lhgocron.LockerOptions{MinHold: -time.Second}, ""},
		{"huge_min_hold", &lhgocron.LockerOptions{MinHold: leasehold.MaxTTL + 1}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := lhgocron.NewLocker(c, tc.opts)
			if tc.wantKey == "" {
				if err == nil {
					t.Fatal("accepted")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := l.Key("job", at); got != tc.wantKey {
				t.Errorf("Key = %q, want %q", got, tc.wantKey)
			}
		})
	}
}

// Two schedulers, each with a client of its own on one sqlite file (as two
// processes would be), run the same job every second: each tick runs once.
func TestTwoSchedulersRunEachTickOnce(t *testing.T) {
	path := dbPath(t)
	log := newRunLog()
	for _, who := range []string{"a", "b"} {
		c, _ := newClient(t, path, nil)
		lk, err := lhgocron.NewLocker(c, &lhgocron.LockerOptions{Period: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		s := newScheduler(t, gocronv2.WithDistributedLocker(lk))
		job := lk.Guard(func(ctx context.Context) error {
			log.add(lhgocron.LeaseFrom(ctx).Key(), who)
			return nil
		})
		if _, err := s.NewJob(everySecond(), gocronv2.NewTask(job), gocronv2.WithName("tick")); err != nil {
			t.Fatal(err)
		}
		s.Start()
	}
	log.waitTicks(t, 4)
	log.checkOnce(t)
}

// A job whose lease is lost while it runs sees its context cancelled with
// the *leasehold.LostError, and Guard returns that error.
func TestLostLeaseCancelsJob(t *testing.T) {
	path := dbPath(t)
	c, _ := newClient(t, path, nil)
	_, thief := newClient(t, path, nil)
	lk, err := lhgocron.NewLocker(c, &lhgocron.LockerOptions{TTL: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan *leasehold.Lease, 1)
	cause := make(chan error, 1)
	jobErr := make(chan error, 1)
	s := newScheduler(t, gocronv2.WithDistributedLocker(lk))
	job := lk.Guard(func(ctx context.Context) error {
		started <- lhgocron.LeaseFrom(ctx)
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return ctx.Err()
	})
	_, err = s.NewJob(gocronv2.OneTimeJob(gocronv2.OneTimeJobStartImmediately()), gocronv2.NewTask(job),
		gocronv2.WithName("lost"),
		gocronv2.WithEventListeners(gocronv2.AfterJobRunsWithError(func(_ uuid.UUID, _ string, err error) { jobErr <- err })))
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	var l *leasehold.Lease
	select {
	case l = <-started:
	case <-time.After(limit):
		t.Fatal("the job did not start")
	}
	// Another process deletes the record: the next renewal is refused.
	if err := thief.Release(context.Background(), l.Grant()); err != nil {
		t.Fatalf("deleting the job's lease: %v", err)
	}
	if err := <-cause; !errors.Is(err, leasehold.ErrLost) {
		t.Fatalf("the job's context ended with %v, want a *leasehold.LostError", err)
	}
	if err := <-jobErr; !errors.Is(err, leasehold.ErrLost) || !errors.Is(err, context.Canceled) {
		t.Errorf("the guarded job returned %v, want its error joined to the *leasehold.LostError", err)
	}
}

// A guarded job run without the Locker does not run.
func TestGuardWithoutLease(t *testing.T) {
	c, err := leasehold.New(memory.New(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	lk, err := lhgocron.NewLocker(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	ran := false
	err = lk.Guard(func(context.Context) error { ran = true; return nil })(context.Background())
	if !errors.Is(err, lhgocron.ErrNoLease) || ran {
		t.Fatalf("got %v, ran %v; want ErrNoLease, not run", err, ran)
	}
}
