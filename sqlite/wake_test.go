package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

// slowWaiter is a client whose waiting acquires back off for an hour between
// attempts, on leases whose TTL (two hours) caps neither the backoff (at a
// third of the TTL) nor the holder's remaining time. Within a test's
// timeout, only a notification can make it try again.
func slowWaiter(t testing.TB, s leasehold.Store) *leasehold.Client {
	t.Helper()
	cl, err := leasehold.New(s, &leasehold.Options{TTL: 2 * time.Hour, Backoff: leasehold.ConstBackoff(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// countingStore counts the acquire attempts that found the key held, and
// keeps the Store's capabilities (Subscribe among them).
type countingStore struct {
	*Store
	held atomic.Int64
}

func (c *countingStore) Acquire(ctx context.Context, r leasehold.AcquireRequest) (leasehold.Grant, error) {
	g, err := c.Store.Acquire(ctx, r)
	if errors.Is(err, leasehold.ErrHeld) {
		c.held.Add(1)
	}
	return g, err
}

// waitHeld waits until c has seen the key held n times: the waiter is
// subscribed and sleeping in its backoff.
func waitHeld(t *testing.T, c *countingStore, n int64) {
	t.Helper()
	for c.held.Load() < n {
		time.Sleep(time.Millisecond)
	}
}

// TestWakeAcrossStores: a waiter on one Store gets the key that a holder on
// another Store of the same file releases, though its backoff is an hour:
// the release woke it. Without the wake-up it would wait out the test.
func TestWakeAcrossStores(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("releases wake other Stores on Linux only")
	}
	path := tempDB(t)
	holder := openT(t, path, nil)
	waiter := &countingStore{Store: openT(t, path, nil)}
	g := mustAcquire(t, holder, req("k", 2*time.Hour))
	type result struct {
		l   *leasehold.Lease
		err error
	}
	got := make(chan result, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := slowWaiter(t, waiter)
	go func() {
		l, err := cl.Acquire(ctx, "k", leasehold.AcquireOptions{Wait: leasehold.WaitForever})
		got <- result{l, err}
	}()
	waitHeld(t, waiter, 1)
	if err := holder.Release(ctxT(t), g); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil {
		t.Fatalf("waiter: %v; the release did not wake it", r.err)
	}
	defer r.l.Release(ctxT(t))
	if r.l.Token() != g.Token+1 {
		t.Fatalf("waiter's token %d, want %d", r.l.Token(), g.Token+1)
	}
	if n := waiter.held.Load(); n != 1 {
		t.Fatalf("%d attempts found the key held, want 1 (woken once, then granted)", n)
	}
}

// TestWakeProcess: a waiter in a child process with an hour's backoff gets
// the key as soon as this process releases it.
func TestWakeProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("releases wake other processes on Linux only")
	}
	path := tempDB(t)
	s := openT(t, path, nil)
	g := mustAcquire(t, s, req("k", 2*time.Hour))
	c := startChild(t, "", "wait", map[string]string{"DB": path, "KEY": "k"}, nil)
	for !strings.Contains(c.stderr.String(), "waiting\n") {
		select {
		case err := <-c.done:
			t.Fatalf("child exited: %v\n%s", err, c.stderr)
		case <-time.After(time.Millisecond):
		}
	}
	if err := s.Release(ctxT(t), g); err != nil {
		t.Fatal(err)
	}
	c.wait(t, 30*time.Second)
	want := fmt.Sprintf("granted %d\n", g.Token+1)
	if out := c.stderr.String(); !strings.Contains(out, want) {
		t.Fatalf("child's output %q, want %q", out, want)
	}
}

// waitChild is the child mode "wait": wait for KEY with an hour's backoff,
// printing "waiting" once an attempt found it held, then "granted TOKEN".
// It fails if the wait lasts 30 s.
func waitChild(db, key string) error {
	s, err := Open(context.Background(), db, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	cs := &countingStore{Store: s}
	cl, err := leasehold.New(cs, &leasehold.Options{TTL: 2 * time.Hour, Backoff: leasehold.ConstBackoff(time.Hour)})
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		for cs.held.Load() == 0 && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		fmt.Println("waiting")
	}()
	l, err := cl.Acquire(ctx, key, leasehold.AcquireOptions{Wait: leasehold.WaitForever})
	if err != nil {
		return fmt.Errorf("not woken by the release: %w", err)
	}
	fmt.Println("granted", strconv.FormatUint(l.Token(), 10))
	return l.Release(context.Background())
}

// TestSubscribeBuckets: a release wakes its key's subscribers on every Store
// of the file, and not a subscriber of a key in another bucket; a release
// that fails (not the holder) wakes nobody. A watch delivers events in
// order, so once a later release of a marker key has woken its subscriber,
// every earlier event has been delivered.
func TestSubscribeBuckets(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("releases wake other Stores on Linux only")
	}
	path := tempDB(t)
	a, b := openT(t, path, nil), openT(t, path, nil)
	const k, other, marker = "k", "other", "marker"
	if bucketOf(k) == bucketOf(other) || bucketOf(k) == bucketOf(marker) || bucketOf(other) == bucketOf(marker) {
		t.Fatal("pick other keys: two share a bucket")
	}
	sub := func(s *Store, key string) <-chan struct{} {
		ch, unsub, err := s.Subscribe(ctxT(t), key)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(unsub)
		return ch
	}
	ka, kb, ob, mb := sub(a, k), sub(b, k), sub(b, other), sub(b, marker)
	flush := func(what string) {
		t.Helper()
		mustRelease(t, a, mustAcquire(t, a, req(marker, time.Minute)))
		waitWake(t, mb, what)
	}

	g := mustAcquire(t, a, req(k, time.Minute))
	stale := g
	stale.Owner = leasehold.NewOwnerID()
	if err := a.Release(ctxT(t), stale); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("release by another owner: %v", err)
	}
	flush("marker after the failed release")
	if len(kb) != 0 || len(ka) != 0 {
		t.Fatal("a release that failed woke the key's subscribers")
	}
	mustRelease(t, a, g)
	waitWake(t, ka, "subscriber on the releasing Store")
	waitWake(t, kb, "subscriber on another Store")
	flush("marker after the release")
	if len(ob) != 0 {
		t.Fatal("a release of k woke a subscriber of another bucket's key")
	}
}

func mustRelease(t *testing.T, s *Store, g leasehold.Grant) {
	t.Helper()
	if err := s.Release(ctxT(t), g); err != nil {
		t.Fatal(err)
	}
}

func waitWake(t *testing.T, ch <-chan struct{}, who string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no wake-up within 30 s of the release", who)
	}
}

// TestWakeDirectoryRemoved: when the wake directory is removed under a
// watch, every subscriber is woken (releases may go unseen for a moment),
// and a new watch on a new directory wakes them on the next release.
func TestWakeDirectoryRemoved(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the wake directory is watched on Linux only")
	}
	path := tempDB(t)
	s := openT(t, path, nil)
	ch, unsub, err := s.Subscribe(ctxT(t), "k")
	if err != nil {
		t.Fatal(err)
	}
	defer unsub()
	if err := os.RemoveAll(path + wakeDirSuffix); err != nil {
		t.Fatal(err)
	}
	waitWake(t, ch, "subscriber when the directory went")
	other := openT(t, path, nil)
	mustRelease(t, other, mustAcquire(t, other, req("k", time.Minute)))
	waitWake(t, ch, "subscriber after the directory was recreated")
	if fi, err := os.Stat(filepath.Join(path+wakeDirSuffix, bucketName(bucketOf("k")))); err != nil || fi.Mode() != 0o600 {
		t.Fatalf("bucket file: %v %v, want mode 0600", fi, err)
	}
}

// TestSubscribeClosed: Subscribe fails on a closed store with ErrClosed, and
// a subscription taken before Close stays quiet and can still end.
func TestSubscribeClosed(t *testing.T) {
	s := openT(t, tempDB(t), nil)
	ch, unsub, err := s.Subscribe(ctxT(t), "k")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Subscribe(ctxT(t), ""); !errors.Is(err, leasehold.ErrInvalidKey) {
		t.Fatalf("subscribe to an empty key: %v", err)
	}
	s.Close()
	unsub()
	unsub()
	select {
	case <-ch:
		t.Fatal("Close woke a subscriber")
	default:
	}
	if _, _, err := s.Subscribe(ctxT(t), "k"); !errors.Is(err, leasehold.ErrClosed) || !errors.Is(err, leasehold.ErrStore) {
		t.Fatalf("subscribe after close: %v, want a StoreError wrapping ErrClosed", err)
	}
}

func TestBucketNames(t *testing.T) {
	for b := range wakeBuckets {
		if got, ok := parseBucket(bucketName(b)); !ok || got != b {
			t.Fatalf("bucket %d: name %q parses to %d %v", b, bucketName(b), got, ok)
		}
	}
	for _, name := range []string{"", "0", "000", "0g", "AB", "-1", "x"} {
		if _, ok := parseBucket(name); ok {
			t.Fatalf("parseBucket(%q) accepted", name)
		}
	}
}

// TestWakeOne: a release wakes one subscriber of the key per Store, the
// oldest without a wake-up pending; one that ends its subscription with a
// wake-up unread passes it to the next.
func TestWakeOne(t *testing.T) {
	s := openT(t, tempDB(t), nil)
	const k, marker = "k", "marker"
	if bucketOf(k) == bucketOf(marker) {
		t.Fatal("pick other keys: k and marker share a bucket")
	}
	first, unsubFirst, err := s.Subscribe(ctxT(t), k)
	if err != nil {
		t.Fatal(err)
	}
	second, unsubSecond, err := s.Subscribe(ctxT(t), k)
	if err != nil {
		t.Fatal(err)
	}
	defer unsubSecond()
	mb, unsubMarker, err := s.Subscribe(ctxT(t), marker)
	if err != nil {
		t.Fatal(err)
	}
	defer unsubMarker()
	release := func(key string) { mustRelease(t, s, mustAcquire(t, s, req(key, time.Minute))) }
	for round := range 2 {
		release(k)
		waitWake(t, first, fmt.Sprintf("round %d: the oldest subscriber", round))
		release(marker) // events arrive in order: k's were all delivered
		waitWake(t, mb, "marker")
		if len(second) != 0 {
			t.Fatalf("round %d: a release woke both subscribers of the key", round)
		}
	}
	// Two releases while the oldest has its wake-up pending: the second
	// goes to the next subscriber. The marker's release between them makes
	// them two events: inotify merges identical events that are not read
	// yet, so two releases of one bucket in quick succession may be one
	// wake-up (a hint lost: the waiter keeps to its backoff).
	release(k)
	release(marker)
	waitWake(t, mb, "marker, after the first of two releases")
	release(k)
	waitWake(t, second, "the next subscriber, while the oldest had a wake-up pending")
	// The oldest leaves without reading its wake-up: the next gets it.
	unsubFirst()
	waitWake(t, second, "the next subscriber, after the oldest left with a wake-up unread")
}
