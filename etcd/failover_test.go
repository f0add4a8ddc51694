package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/etcd"
	"github.com/leasehold-go/leasehold/fence"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// testFailover kills the cluster's leader while holders contend for one key
// and write under it, fenced twice: into an in-test register that accepts
// token >= highest, and into etcd with FencedTxn guarded by IsOwner. It
// checks that no stale write got through either fence, that tokens kept
// increasing, and that the survivors carried on after the election.
func testFailover(t *testing.T, c *testserver.Etcd) {
	const (
		workers = 4
		ttl     = time.Second
	)
	k := uniqueKey(t, "k")
	fenceKey, dataKey := "test-fence/"+k, "test-data/"+k
	var reg fence.Register[int]

	var (
		mu          sync.Mutex
		lastGranted uint64 // the highest token granted so far
		backwards   []string
		grants      atomic.Int64
		grantsAfter atomic.Int64 // grants with an accepted etcd write after the kill
		killedAt    atomic.Int64 // unix nanos; 0 before the kill
		firstAfter  atomic.Int64 // nanos from the kill to the first accepted write after it
		storeErrs   atomic.Int64
		etcdRefused atomic.Int64
	)
	probe := newStore(t, c, nil)
	startRev := func() int64 {
		r, err := probe.Client().Get(tctx(t), "probe")
		if err != nil {
			t.Fatal(err)
		}
		return r.Header.Revision
	}()

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		st := openURL(t, c.URL())
		defer st.Close()
		lc, err := leasehold.New(st, &leasehold.Options{Label: fmt.Sprintf("worker-%d", w)})
		if err != nil {
			t.Fatal(err)
		}
		defer lc.Close()
		wg.Go(func() {
			for ctx.Err() == nil {
				mu.Lock()
				before := lastGranted
				mu.Unlock()
				l, err := lc.Acquire(ctx, k, leasehold.AcquireOptions{TTL: ttl, Wait: 5 * time.Second})
				if err != nil {
					if ctx.Err() == nil && !errors.Is(err, leasehold.ErrHeld) {
						storeErrs.Add(1)
						time.Sleep(20 * time.Millisecond)
					}
					continue
				}
				tok := l.Token()
				mu.Lock()
				if tok <= before {
					backwards = append(backwards, fmt.Sprintf("token %d granted after %d", tok, before))
				}
				lastGranted = max(lastGranted, tok)
				mu.Unlock()
				grants.Add(1)
				wrote := false
				for i := 0; i < 3 && l.Context().Err() == nil; i++ {
					wctx, cancel := context.WithTimeout(l.Context(), time.Second)
					ok, err := etcd.FencedTxn(wctx, st.Client(), fenceKey, tok,
						[]clientv3.Cmp{st.IsOwner(l.Grant())}, clientv3.OpPut(dataKey, strconv.FormatUint(tok, 10)))
					cancel()
					if err == nil && !ok {
						etcdRefused.Add(1)
					}
					_ = reg.Write(tok, i)
					if ok {
						wrote = true
						if at := killedAt.Load(); at != 0 {
							firstAfter.CompareAndSwap(0, time.Now().UnixNano()-at)
						}
					}
					time.Sleep(5 * time.Millisecond)
				}
				if wrote && killedAt.Load() != 0 {
					grantsAfter.Add(1)
				}
				_ = l.Release(context.Background())
			}
		})
	}

	eventually(t, 30*time.Second, "10 grants before the kill", func() bool { return grants.Load() >= 10 })
	lctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	leader, err := c.Leader(lctx)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	killedAt.Store(time.Now().UnixNano())
	c.Kill(leader)
	t.Logf("killed leader %s after %d grants", c.Nodes[leader].Name, grants.Load())

	// The survivors carry on: election timeout (250 ms) + TTL (1 s) is the
	// expected bound; the assertion allows a loaded machine 10 times that.
	bound := 10 * (250*time.Millisecond + ttl)
	eventually(t, bound, "5 grants with accepted writes after the leader kill", func() bool { return grantsAfter.Load() >= 5 })
	stop()
	wg.Wait()
	t.Logf("first accepted write %s after the kill (election timeout + TTL = %s); %d grants, %d store errors, %d etcd-refused writes",
		time.Duration(firstAfter.Load()), 250*time.Millisecond+ttl, grants.Load(), storeErrs.Load(), etcdRefused.Load())

	if len(backwards) > 0 {
		t.Errorf("tokens went backwards: %v", backwards)
	}
	accepted, rejected := reg.Counts()
	var prev uint64
	for _, w := range reg.History() {
		if w.Accepted && w.Token < prev {
			t.Errorf("register accepted token %d after %d", w.Token, prev)
		}
		if w.Accepted {
			prev = w.Token
		}
	}
	t.Logf("register: %d writes accepted, %d stale writes rejected", accepted, rejected)

	// Replay etcd's history of the holder and data keys: every accepted data
	// write happened while its token held the key, and tokens never went
	// down.
	hctx, hcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer hcancel()
	cli := probe.Client()
	marker, err := cli.Put(hctx, "test-marker/"+k, "end")
	if err != nil {
		t.Fatal(err)
	}
	qpfx := etcd.QueuePrefix("", k)
	live := map[string]int64{} // the queue's entries: name -> CreateRevision
	holder := func() int64 {   // the oldest entry holds the key
		var h int64
		for _, rev := range live {
			if h == 0 || rev < h {
				h = rev
			}
		}
		return h
	}
	var lastHolder, lastWrite int64
	writes := 0
	// One watch over the whole key space delivers every change in
	// revision order, up to the marker.
	wch := cli.Watch(hctx, "\x00", clientv3.WithFromKey(), clientv3.WithRev(startRev+1))
	for done := false; !done; {
		resp, ok := <-wch
		if !ok || resp.Err() != nil {
			t.Fatalf("history watch ended: %v", resp.Err())
		}
		for _, e := range resp.Events {
			if e.Kv.ModRevision >= marker.Header.Revision {
				done = true
				break
			}
			key := string(e.Kv.Key)
			switch {
			case strings.HasPrefix(key, qpfx):
				if e.Type == mvccpb.PUT {
					live[key] = e.Kv.CreateRevision
				} else {
					delete(live, key)
				}
				if h := holder(); h != 0 {
					if h < lastHolder {
						t.Errorf("holder token went from %d down to %d", lastHolder, h)
					}
					lastHolder = h
				}
			case key == dataKey:
				if e.Type != mvccpb.PUT {
					continue
				}
				tok, _ := strconv.ParseInt(string(e.Kv.Value), 10, 64)
				writes++
				if h := holder(); tok != h {
					t.Errorf("data write with token %d accepted at revision %d while the holder's token was %d", tok, e.Kv.ModRevision, h)
				}
				if tok < lastWrite {
					t.Errorf("data write with token %d accepted after token %d", tok, lastWrite)
				}
				lastWrite = tok
			}
		}
	}
	hcancel()
	if writes == 0 {
		t.Error("no data writes in etcd's history")
	}
	t.Logf("etcd history: %d accepted fenced writes, all by the holder of the time", writes)

	// Bring the killed member back for the next test.
	if err := c.Restart(leader); err != nil {
		t.Fatal(err)
	}
	rctx, rcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer rcancel()
	if err := c.WaitHealthy(rctx); err != nil {
		t.Fatal(err)
	}
}

// testNoQuorum stops two of three members: acquires fail with a clear error
// instead of hanging, no lease is counted held, and nothing keeps running.
func testNoQuorum(t *testing.T, c *testserver.Etcd) {
	st := newStore(t, c, nil)
	k := uniqueKey(t, "k")
	// Warm a session so the failure is the acquire's, not the session's.
	g, err := st.Acquire(tctx(t), areq(uniqueKey(t, "warm"), 2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Release(tctx(t), g)
	c.Kill(1)
	c.Kill(2)
	defer func() {
		for _, i := range []int{1, 2} {
			if err := c.Restart(i); err != nil {
				t.Error(err)
			}
		}
	}()
	eventually(t, 20*time.Second, "acquire failing with ErrStore on the cluster without quorum", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_, err := st.Acquire(ctx, areq(k, 2*time.Second))
		if err == nil {
			t.Fatal("acquire succeeded without quorum")
		}
		t.Logf("acquire without quorum: %v", err)
		return errors.Is(err, leasehold.ErrStore)
	})
	// A new store's first acquire needs a session lease: that fails too.
	st2 := newStore(t, c, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := st2.Acquire(ctx, areq(k, 2*time.Second)); err == nil {
		t.Fatal("acquire on a new store succeeded without quorum")
	} else {
		t.Logf("first acquire without quorum: %v", err)
	}
	if err := st2.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
}
