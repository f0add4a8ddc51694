package leasetest_test

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/leasetest"
	"github.com/leasehold-go/leasehold/memory"
	"github.com/leasehold-go/leasehold/rwlock"
)

// brokenRW is the suite's read-write lock with one step left out.
type brokenRW struct {
	leasetest.RWLocker
	c        *leasehold.Client
	key      string
	ttl      time.Duration
	mutation string
}

// brokenHold is a hold of a broken lock: a bare lease.
type brokenHold struct {
	l    *leasehold.Lease
	mode rwlock.Mode
}

func (h brokenHold) Lease() *leasehold.Lease { return h.l }

func (h brokenHold) Release(ctx context.Context) error { return h.l.Release(ctx) }

func (h brokenHold) Sequencer() rwlock.Sequencer {
	return rwlock.Sequencer{Mode: h.mode, Epoch: h.l.Token(), Token: h.l.Token()}
}

// Lock of "writer_ignores_readers" takes the gate and never waits for the
// readers.
func (b *brokenRW) Lock(ctx context.Context, wait time.Duration) (leasetest.RWHold, error) {
	if b.mutation != "writer_ignores_readers" {
		return b.RWLocker.Lock(ctx, wait)
	}
	l, err := b.c.Acquire(ctx, b.key+"/w", leasehold.AcquireOptions{TTL: b.ttl, Wait: wait})
	if err != nil {
		return nil, err
	}
	return brokenHold{l, rwlock.Write}, nil
}

// RLock of "readers_ignore_writer" takes a slot without the gate, so a
// waiting writer does not stop new readers.
func (b *brokenRW) RLock(ctx context.Context, wait time.Duration) (leasetest.RWHold, error) {
	if b.mutation != "readers_ignore_writer" {
		return b.RWLocker.RLock(ctx, wait)
	}
	for {
		for i := range 4 {
			l, err := b.c.Acquire(ctx, b.key+"/r/"+strconv.Itoa(i), leasehold.AcquireOptions{TTL: b.ttl})
			if err == nil {
				return brokenHold{l, rwlock.Read}, nil
			}
			if ctx.Err() != nil || wait == 0 {
				return nil, err
			}
		}
		time.Sleep(time.Millisecond)
	}
}

// TestBrokenRWLock runs the read-write lock rules on one broken lock; only
// the sensitivity test below runs it, in a child process, and expects it
// to fail.
func TestBrokenRWLock(t *testing.T) {
	m := os.Getenv("LEASETEST_RW_MUTATION")
	if m == "" {
		t.Log("runs only as the child of TestRWRulesCatchBrokenLocks")
		return
	}
	shared := memory.New(nil)
	leasetest.RunRWRules(t, leasetest.Config{Open: func(testing.TB) leasehold.Store { return shared.Reopen() }},
		func(c *leasehold.Client, key string, ttl time.Duration) (leasetest.RWLocker, error) {
			l, err := leasetest.NewRWLock(c, key, ttl)
			return &brokenRW{RWLocker: l, c: c, key: key, ttl: ttl, mutation: m}, err
		})
}

func TestRWRulesCatchBrokenLocks(t *testing.T) {
	for _, mu := range []struct{ name, catcher string }{
		{"writer_ignores_readers", "rwlock_never_a_reader_with_a_writer"},
		{"readers_ignore_writer", "rwlock_waiting_writer_gets_in_within_readers_ttl"},
	} {
		t.Run(mu.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run", "^TestBrokenRWLock$/^"+mu.catcher+"$", "-test.count=1")
			cmd.Env = append(os.Environ(), "LEASETEST_RW_MUTATION="+mu.name)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the rules passed a lock with %s:\n%s", mu.name, out)
			}
			if _, ok := err.(*exec.ExitError); !ok {
				t.Fatalf("running the child: %v", err)
			}
			if !strings.Contains(string(out), "--- FAIL: TestBrokenRWLock/"+mu.catcher+" ") {
				t.Fatalf("the rules failed a lock with %s, but not in %s:\n%s", mu.name, mu.catcher, out)
			}
		})
	}
}

// TestRWRulesPassTheLock runs the same rules on the real lock, as the
// sensitivity test's control.
func TestRWRulesPassTheLock(t *testing.T) {
	shared := memory.New(nil)
	leasetest.RunRWRules(t, leasetest.Config{Open: func(testing.TB) leasehold.Store { return shared.Reopen() }}, leasetest.NewRWLock)
}
