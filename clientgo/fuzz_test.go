package clientgo_test

import (
	"context"
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	rl "k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/clientgo"
	"github.com/leasehold-go/leasehold/memory"
)

// FuzzLockOps plays any sequence of client-go's calls by two candidates
// (Get, Create, Update, release) and clock moves against one memory store,
// and checks after each call: a successful Create or Update leaves its
// candidate the store's holder under the token of its term, and every
// grant's token is above every earlier one (so two candidates are never
// both granted the same term, and a deposed leader's renewal never
// succeeds); a failed Create is AlreadyExists and a failed Update a
// Conflict (the memory store has no other failures); Get names the
// store's holder, or is NotFound when there is none.
func FuzzLockOps(f *testing.F) {
	f.Add([]byte{2, 3, 4, 5, 0xf8, 5, 4, 6, 1})
	f.Add([]byte{2, 0xf8, 0xf8, 5, 4, 7, 2, 3, 0, 1})
	f.Add([]byte{4, 5, 6, 7, 0x38, 4, 5, 0x78, 5, 4})
	f.Fuzz(func(t *testing.T, ops []byte) {
		ctx := context.Background()
		clock := &fakeNow{t: time.Unix(1_700_000_000, 0)}
		st := memory.New(&memory.Options{Now: clock.now})
		locks := []*clientgo.Lock{newLock(t, st, "a"), newLock(t, st, "b")}
		var top uint64 // the highest token granted so far
		for i, b := range ops {
			if i == 64 {
				break
			}
			l := locks[b&1]
			switch (b >> 1) % 5 {
			case 0:
				checkGet(t, st, l)
			case 1:
				err := l.Create(ctx, rec(l.Identity()))
				top = checkWrite(t, st, l, err, top, apierrors.IsAlreadyExists)
			case 2:
				err := l.Update(ctx, rec(l.Identity()))
				top = checkWrite(t, st, l, err, top, apierrors.IsConflict)
			case 3:
				if err := l.Update(ctx, rl.LeaderElectionRecord{LeaseDurationSeconds: 1}); err != nil {
					t.Fatalf("%s's release: %v", l.Identity(), err)
				}
				if _, ok := l.Term(); ok {
					t.Fatalf("%s has a term after its release", l.Identity())
				}
			case 4:
				clock.add(time.Duration(b>>4+1) * 500 * time.Millisecond)
			}
		}
	})
}

// checkWrite checks the outcome err of l's Create or Update: on success l
// is the store's holder under its term's token, above top (the new top is
// returned); a failure is of the kind refused says.
func checkWrite(t *testing.T, st leasehold.Store, l *clientgo.Lock, err error, top uint64, refused func(error) bool) uint64 {
	t.Helper()
	if err != nil {
		if !refused(err) {
			t.Fatalf("%s's write failed with %v, not the refusal client-go expects", l.Identity(), err)
		}
		return top
	}
	tm, ok := l.Term()
	h, herr := st.Holder(context.Background(), "elect/ctl")
	if !ok || herr != nil || h.Label != l.Identity() || h.Token != tm.Token {
		t.Fatalf("%s's write succeeded with term %+v (%v), but the store's holder is %+v (%v)", l.Identity(), tm, ok, h, herr)
	}
	if tm.Token < top {
		t.Fatalf("%s holds token %d, below the earlier grant %d", l.Identity(), tm.Token, top)
	}
	return tm.Token
}

// checkGet checks that l's Get names the store's holder.
func checkGet(t *testing.T, st leasehold.Store, l *clientgo.Lock) {
	t.Helper()
	got, _, err := l.Get(context.Background())
	h, herr := st.Holder(context.Background(), "elect/ctl")
	switch {
	case errors.Is(herr, leasehold.ErrNotHeld):
		if !apierrors.IsNotFound(err) {
			t.Fatalf("Get with no holder: %+v %v, want NotFound", got, err)
		}
	case err != nil || got.HolderIdentity != h.Label || got.LeaderTransitions != int(h.Token-1):
		t.Fatalf("Get: %+v %v, but the store's holder is %+v", got, err, h)
	}
}
