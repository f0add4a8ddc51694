package consul_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/consul"
	"github.com/leasehold-go/leasehold/fence"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

// failover is the shared state of testFailover's workers.
type failover struct {
	mu          sync.Mutex
	lastGranted uint64           // the highest token granted so far
	current     *leasehold.Lease // the latest grant
	violations  []string
	reg         fence.Register[int]
	grants      atomic.Int64
	grantsAfter atomic.Int64 // grants with an accepted guarded write after the kill
	killed      atomic.Bool
	consulWrote atomic.Int64
}

// granted checks a new grant l, acquired after before was the highest
// token: its token is above before, and the previous holder's own time
// (Lease.Remaining, read from its clock) has run out.
func (f *failover) granted(l *leasehold.Lease, before uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if l.Token() <= before {
		f.violations = append(f.violations, fmt.Sprintf("token %d granted after %d", l.Token(), before))
	}
	if p := f.current; p != nil && p.Remaining() > 0 {
		f.violations = append(f.violations, fmt.Sprintf("token %d granted while token %d had %s left", l.Token(), p.Token(), p.Remaining()))
	}
	f.current = l
	f.lastGranted = max(f.lastGranted, l.Token())
	f.grants.Add(1)
}

// work writes under l: into the register, and into Consul by a transaction
// guarded by the grant's entry: read, its value must hold l's token, and
// the write is conditioned on its ModifyIndex as read.
func (f *failover) work(st *consul.Store, l *leasehold.Lease, dataKey string) {
	wrote := false
	for i := 0; i < 3 && l.Context().Err() == nil; i++ {
		_ = f.reg.Write(l.Token(), i)
		ctx, cancel := context.WithTimeout(l.Context(), time.Second)
		kv, _, err := st.Client().KV().Get(st.KeyOf(l.Key()), (&api.QueryOptions{}).WithContext(ctx))
		if err != nil || kv == nil || kv.Session == "" || !bytes.Contains(kv.Value, []byte(fmt.Sprintf(`"token":%d,`, l.Token()))) {
			cancel()
			continue
		}
		ok, _, _, err := st.Client().Txn().Txn(api.TxnOps{
			{KV: &api.KVTxnOp{Verb: api.KVCheckIndex, Key: st.KeyOf(l.Key()), Index: kv.ModifyIndex}},
			{KV: &api.KVTxnOp{Verb: api.KVSet, Key: dataKey, Value: []byte(strconv.FormatUint(l.Token(), 10))}},
		}, (&api.QueryOptions{}).WithContext(ctx))
		cancel()
		if err == nil && ok {
			wrote = true
			f.consulWrote.Add(1)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if wrote && f.killed.Load() {
		f.grantsAfter.Add(1)
	}
}

// testFailover kills the cluster's Raft leader while workers on the other
// two agents contend for one key and write under it: tokens keep
// increasing, no grant is made while the previous holder's own time is
// left, the register never accepts a stale write, and the survivors carry
// on once a new leader is elected.
func testFailover(t *testing.T, c *testserver.Consul) {
	const ttl = time.Second
	lctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	leader, err := c.Leader(lctx)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	k := uniqueKey(t, "k")
	dataKey := "test-data/" + k
	f := &failover{}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	w := 0
	for i := range c.Agents {
		if i == leader {
			continue
		}
		for range 2 {
			st := newStore(t, c, i)
			lc, err := leasehold.New(st, &leasehold.Options{Label: fmt.Sprintf("worker-%d", w)})
			if err != nil {
				t.Fatal(err)
			}
			defer lc.Close()
			w++
			wg.Go(func() {
				for ctx.Err() == nil {
					f.mu.Lock()
					before := f.lastGranted
					f.mu.Unlock()
					l, err := lc.Acquire(ctx, k, leasehold.AcquireOptions{TTL: ttl, Wait: 5 * time.Second})
					if err != nil {
						if ctx.Err() == nil && !errors.Is(err, leasehold.ErrHeld) {
							time.Sleep(20 * time.Millisecond)
						}
						continue
					}
					f.granted(l, before)
					f.work(st, l, dataKey)
					_ = l.Release(context.Background())
				}
			})
		}
	}
	eventually(t, 30*time.Second, "10 grants before the kill", func() bool { return f.grants.Load() >= 10 })
	f.killed.Store(true)
	killedAt := time.Now()
	c.Kill(leader)
	t.Logf("killed the leader %s after %d grants", c.Agents[leader].Name, f.grants.Load())
	eventually(t, 60*time.Second, "5 grants with accepted guarded writes after the leader kill", func() bool { return f.grantsAfter.Load() >= 5 })
	t.Logf("5 grants with writes %s after the kill", time.Since(killedAt).Round(time.Millisecond))
	stop()
	wg.Wait()
	f.mu.Lock()
	for _, v := range f.violations {
		t.Error(v)
	}
	f.mu.Unlock()
	var prev uint64
	for _, w := range f.reg.History() {
		if w.Accepted && w.Token < prev {
			t.Errorf("register accepted token %d after %d", w.Token, prev)
		}
		if w.Accepted {
			prev = w.Token
		}
	}
	accepted, rejected := f.reg.Counts()
	t.Logf("%d grants; register: %d accepted, %d stale refused; %d guarded Consul writes", f.grants.Load(), accepted, rejected, f.consulWrote.Load())
	if err := c.Restart(leader); err != nil {
		t.Fatal(err)
	}
	rctx, rcancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer rcancel()
	if err := c.WaitServing(rctx); err != nil {
		t.Fatal(err)
	}
}
