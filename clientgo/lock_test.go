package clientgo_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	rl "k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/clientgo"
	"github.com/leasehold-go/leasehold/memory"
)

// fakeNow is a clock the test moves.
type fakeNow struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeNow) now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.t }
func (f *fakeNow) add(d time.Duration) {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
}

func newLock(t *testing.T, st leasehold.Store, id string) *clientgo.Lock {
	t.Helper()
	l, err := clientgo.New(st, "elect/ctl", id, nil)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// rec is the record client-go writes for id with a 10 s lease.
func rec(id string) rl.LeaderElectionRecord {
	return rl.LeaderElectionRecord{HolderIdentity: id, LeaseDurationSeconds: 10}
}

// The calls client-go makes, in the order it makes them, against a store
// whose clock the test moves: the first Create wins and the second is
// AlreadyExists; an Update by a candidate that does not hold the key is a
// Conflict while the holder lives; a holder whose lease expired and was
// taken gets a Conflict on its (stale) Update; release frees the key.
func TestLockFollowsClientGoCalls(t *testing.T) {
	ctx := context.Background()
	clock := &fakeNow{t: time.Unix(1_700_000_000, 0)}
	st := memory.New(&memory.Options{Now: clock.now})
	a, b := newLock(t, st, "a"), newLock(t, st, "b")

	if _, _, err := a.Get(ctx); !apierrors.IsNotFound(err) {
		t.Fatalf("Get on a free key: %v, want NotFound", err)
	}
	if err := a.Create(ctx, rec("a")); err != nil {
		t.Fatalf("a.Create: %v", err)
	}
	ta, ok := a.Term()
	if !ok || ta.Token == 0 {
		t.Fatalf("a's term after Create: %+v %v", ta, ok)
	}
	err := b.Create(ctx, rec("b"))
	var held *leasehold.HeldError
	if !apierrors.IsAlreadyExists(err) || !errors.As(err, &held) {
		t.Fatalf("b.Create while a holds: %v, want AlreadyExists wrapping a *leasehold.HeldError", err)
	}
	got, raw, err := b.Get(ctx)
	if err != nil || got.HolderIdentity != "a" || got.LeaseDurationSeconds != 10 || len(raw) == 0 {
		t.Fatalf("b.Get: %+v %q %v, want a holding with 10 s left", got, raw, err)
	}
	if err := b.Update(ctx, rec("b")); !apierrors.IsConflict(err) {
		t.Fatalf("b.Update while a holds: %v, want Conflict", err)
	}
	if _, ok := b.Term(); ok {
		t.Fatal("b has a term without a grant")
	}
	clock.add(5 * time.Second)
	if err := a.Update(ctx, rec("a")); err != nil {
		t.Fatalf("a's renewal: %v", err)
	}
	clock.add(11 * time.Second) // a's lease expires by the store's clock
	if err := b.Update(ctx, rec("b")); err != nil {
		t.Fatalf("b's take-over after a expired: %v", err)
	}
	tb, ok := b.Term()
	if !ok || tb.Token <= ta.Token {
		t.Fatalf("b's term %+v (%v), want a token above a's %d", tb, ok, ta.Token)
	}
	if err := a.Update(ctx, rec("a")); !apierrors.IsConflict(err) || !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("a's stale renewal after b took over: %v, want Conflict wrapping ErrNotHeld", err)
	}
	if _, ok := a.Term(); ok {
		t.Fatal("a still has a term after its grant was taken")
	}
	got, _, err = a.Get(ctx)
	if err != nil || got.HolderIdentity != "b" || got.LeaderTransitions != int(tb.Token-1) {
		t.Fatalf("a.Get after the take-over: %+v %v", got, err)
	}
	if err := b.Update(ctx, rl.LeaderElectionRecord{LeaseDurationSeconds: 1}); err != nil {
		t.Fatalf("b's release: %v", err)
	}
	if _, _, err := a.Get(ctx); !apierrors.IsNotFound(err) {
		t.Fatalf("Get after the release: %v, want NotFound", err)
	}
}

// Get's raw bytes change with every grant, so that client-go notices a
// new holder even under the same identity.
func TestRawRecordChangesWithTheGrant(t *testing.T) {
	ctx := context.Background()
	clock := &fakeNow{t: time.Unix(1_700_000_000, 0)}
	st := memory.New(&memory.Options{Now: clock.now})
	a := newLock(t, st, "a")
	if err := a.Create(ctx, rec("a")); err != nil {
		t.Fatal(err)
	}
	_, raw1, err := a.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Update(ctx, rl.LeaderElectionRecord{}); err != nil {
		t.Fatal(err)
	}
	if err := a.Create(ctx, rec("a")); err != nil {
		t.Fatal(err)
	}
	_, raw2, err := a.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if string(raw1) == string(raw2) {
		t.Fatalf("two grants read back as the same raw record %s", raw1)
	}
}

// Records the lock cannot write are refused, naming the problem.
func TestLockRefusesRecords(t *testing.T) {
	ctx := context.Background()
	a := newLock(t, memory.New(nil), "a")
	for _, tc := range []struct {
		name string
		rec  rl.LeaderElectionRecord
	}{
		{"another identity", rec("b")},
		{"a lease under a second", rl.LeaderElectionRecord{HolderIdentity: "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := a.Create(ctx, tc.rec); err == nil {
				t.Errorf("Create(%+v) succeeded", tc.rec)
			}
			if err := a.Update(ctx, tc.rec); err == nil {
				t.Errorf("Update(%+v) succeeded", tc.rec)
			}
		})
	}
	if _, ok := a.Term(); ok {
		t.Error("a refused record left a term")
	}
}

func TestNewRefuses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		st      leasehold.Store
		key, id string
	}{
		{"nil store", nil, "k", "a"},
		{"empty key", memory.New(nil), "", "a"},
		{"empty identity", memory.New(nil), "k", ""},
		{"identity too long", memory.New(nil), "k", strings.Repeat("x", clientgo.MaxIdentity+1)},
	} {
		if _, err := clientgo.New(tc.st, tc.key, tc.id, nil); err == nil {
			t.Errorf("%s: New succeeded", tc.name)
		}
	}
}
