package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	lhredis "github.com/leasehold-go/leasehold/redis"
	"github.com/leasehold-go/leasehold/redis/internal/core"
	"github.com/leasehold-go/leasehold/redis/redlock"
)

// hold says which commands that follow a lost acquire reply a lossyClient
// keeps in flight.
type hold int

const (
	holdNothing    hold = iota // every command goes through at once
	holdWrites                 // releases
	holdEverything             // every command but an acquire
)

var errReplyLost = errors.New("test: reply lost in flight")

// lossyClient stands for the network between a redlock store and one
// master: its next acquire is applied (apply) or dropped before it arrives
// (!apply), and fails either way as if its reply were lost; then the
// commands hold selects are kept in flight (their sender sees them fail)
// until deliver runs them on the master, late.
type lossyClient struct {
	lhredis.Client
	apply bool
	hold  hold

	mu    sync.Mutex
	armed bool
	lost  bool
	held  []heldCall
}

type heldCall struct {
	script     *core.Script
	keys, args []string
}

// scriptOf names the script a call runs by its SHA or source.
func scriptOf(sha, src string) *core.Script {
	for _, s := range core.Scripts {
		if sha == s.SHA || src == s.Src {
			return s
		}
	}
	return nil
}

// call runs one script call through the lossy link.
func (c *lossyClient) call(ctx context.Context, sha, src string, keys, args []string,
	send func(context.Context, string, []string, []string) (any, error)) (any, error) {
	s := scriptOf(sha, src)
	body := sha + src
	c.mu.Lock()
	switch {
	case s == core.AcquireScript && c.armed:
		if !c.apply {
			c.armed, c.lost = false, true
			c.mu.Unlock()
			return nil, errReplyLost
		}
		c.mu.Unlock()
		if _, err := send(ctx, body, keys, args); err != nil {
			return nil, err // NOSCRIPT: the source comes next, still armed
		}
		c.mu.Lock()
		c.armed, c.lost = false, true
		c.mu.Unlock()
		return nil, errReplyLost
	case s != core.AcquireScript && c.lost &&
		(c.hold == holdEverything || c.hold == holdWrites && s == core.ReleaseScript):
		c.held = append(c.held, heldCall{s, keys, args})
		c.mu.Unlock()
		return nil, errReplyLost
	}
	c.mu.Unlock()
	return send(ctx, body, keys, args)
}

func (c *lossyClient) EvalSha(ctx context.Context, sha string, keys, args []string) (any, error) {
	return c.call(ctx, sha, "", keys, args, c.Client.EvalSha)
}

func (c *lossyClient) Eval(ctx context.Context, src string, keys, args []string) (any, error) {
	return c.call(ctx, "", src, keys, args, c.Client.Eval)
}

// heldCount is the number of commands kept in flight.
func (c *lossyClient) heldCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.held)
}

// deliver runs the held commands, in the order they were sent, and lets
// every later command through.
func (c *lossyClient) deliver(ctx context.Context) error {
	c.mu.Lock()
	held := c.held
	c.held, c.lost = nil, false
	c.mu.Unlock()
	for _, h := range held {
		if _, err := core.Run(ctx, c.Client, h.script, h.keys, h.args); err != nil {
			return err
		}
	}
	return nil
}

// lostReplyCleanup replays the lost-reply interleaving, in which the delayed
// clean-up of an ambiguous acquire could free a later grant of the same
// owner, on a redlock store, with one owner id for both attempts (as
// Acquire's split-vote retry and a caller that retries with the same owner
// do): attempt 1 is applied on three masters whose replies are lost and
// never reaches the other two, so it fails and its clean-up (to all five,
// whose answers were lost) is held in flight; attempt 1's leases end, as at
// their TTL; attempt 2 wins the key on all five; only then does the clean-up
// reach the masters. It must leave attempt 2's grant alone. Without the
// hold, the clean-up frees the masters at once.
func (e *RedlockEnv) lostReplyCleanup(t *testing.T) {
	for _, c := range []struct {
		name string
		hold hold
	}{
		{"in_time", holdNothing},
		{"write_late", holdWrites},
		{"all_late", holdEverything},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := Ctx(t)
			var (
				lossy   []*lossyClient
				clients []lhredis.Client
			)
			for i, m := range e.Masters {
				rc := e.NewClient(t, m.Addr())
				lc := &lossyClient{Client: rc, apply: i < 3, hold: c.hold, armed: true}
				lossy = append(lossy, lc)
				clients = append(clients, lc)
			}
			st, err := redlock.New(clients, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			key := Key(t, "k")
			r := Req(key, 30*time.Second)

			if _, err := st.Acquire(ctx, r); err == nil {
				t.Fatal("attempt 1 (every reply lost) succeeded")
			}
			if c.hold == holdNothing {
				for i, lc := range lossy {
					if l, err := (&core.Node{Client: lc.Client, Names: names(t)}).Holder(ctx, key); err != nil || l != nil {
						t.Fatalf("master %d after a lost reply and an undelayed clean-up: %+v, %v; want the key free", i, l, err)
					}
				}
				return
			}
			n := 0
			for _, lc := range lossy {
				n += lc.heldCount()
			}
			if n == 0 {
				t.Fatal("the clean-up sent nothing that could be held: the test does not reach its path")
			}
			// Attempt 1's leases, where the clean-up has not deleted
			// them yet, end as at their TTL.
			for i, lc := range lossy {
				if _, err := lc.Client.Eval(ctx, "return redis.call('DEL', KEYS[1])", []string{names(t).Lock(key)}, nil); err != nil {
					t.Fatalf("ending attempt 1's lease on master %d: %v", i, err)
				}
			}
			g2, err := st.Acquire(ctx, r)
			if err != nil {
				t.Fatalf("attempt 2: %v", err)
			}
			for i, lc := range lossy {
				if err := lc.deliver(ctx); err != nil {
					t.Fatalf("delivering the late clean-up to master %d: %v", i, err)
				}
			}
			h, err := st.Holder(ctx, key)
			if err != nil || h.Token != g2.Token {
				t.Fatalf("after the late clean-up: holder %+v, %v; want attempt 2's grant (token %d) to hold", h, err, g2.Token)
			}
			if _, err := st.Renew(ctx, g2); err != nil {
				t.Fatalf("renewing attempt 2's grant after the late clean-up: %v", err)
			}
			if err := st.Release(ctx, g2); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Holder(ctx, key); !errors.Is(err, leasehold.ErrNotHeld) {
				t.Fatalf("after releasing attempt 2: %v, want ErrNotHeld", err)
			}
		})
	}
}

func names(t testing.TB) core.Names {
	n, err := core.NewNames("")
	if err != nil {
		t.Fatal(err)
	}
	return n
}
