package leasehold_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
)

// gatedStore is a memory store whose Acquire says when it is called and
// waits for the gate to open before it answers.
type gatedStore struct {
	*memory.Store
	entered chan struct{}
	gate    chan struct{}
}

func (s gatedStore) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	close(s.entered)
	<-s.gate
	return s.Store.Acquire(ctx, req)
}

// slowGrantRecorder records events, dawdling on a granted acquire before
// it records it, as a busy observer (an exporter's lock) might.
type slowGrantRecorder struct{ recorder }

func (r *slowGrantRecorder) Observe(e leasehold.Event) {
	if e.Kind == leasehold.EventAcquire && e.Err == nil {
		time.Sleep(50 * time.Microsecond)
	}
	r.recorder.Observe(e)
}

// TestGrantIsReportedBeforeItsEnd races Close with an acquire whose grant
// arrives as the close begins: whatever wins, a lease's EventRelease or
// EventLost must follow its EventAcquire (an observer counting leases held
// would otherwise count one forever), and a grant reported must end once.
func TestGrantIsReportedBeforeItsEnd(t *testing.T) {
	for run := range 1000 {
		rec := &slowGrantRecorder{}
		mem := memory.New(nil)
		st := gatedStore{Store: mem, entered: make(chan struct{}), gate: make(chan struct{})}
		c, err := leasehold.New(st, &leasehold.Options{Observer: rec, TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var acqErr error
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, acqErr = c.Acquire(context.Background(), "k", leasehold.AcquireOptions{})
		}()
		<-st.entered
		close(st.gate)
		if err := c.Close(); err != nil {
			t.Fatalf("run %d: close: %v", run, err)
		}
		wg.Wait()
		mem.Close()
		if acqErr != nil && !errors.Is(acqErr, leasehold.ErrClosed) {
			t.Fatalf("run %d: acquire: %v", run, acqErr)
		}
		checkGrantOrder(t, run, rec.kindsAndErrs())
	}
}

// checkGrantOrder fails unless the events are a granted acquire followed
// by exactly one release or loss, or a refused acquire alone.
func checkGrantOrder(t *testing.T, run int, kinds []string) {
	t.Helper()
	switch len(kinds) {
	case 1:
		if kinds[0] == "acquire" { // granted, never ended
			t.Fatalf("run %d: a granted lease never ended: %v", run, kinds)
		}
		if kinds[0] != "acquire:refused" {
			t.Fatalf("run %d: events %v", run, kinds)
		}
	case 2:
		if kinds[0] != "acquire" || (kinds[1] != "release" && kinds[1] != "lost") {
			t.Fatalf("run %d: events %v, want a granted acquire, then its end", run, kinds)
		}
	default:
		t.Fatalf("run %d: events %v", run, kinds)
	}
}

// kindsAndErrs is kinds, with a refused acquire named acquire:refused.
func (r *recorder) kindsAndErrs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ks []string
	for _, e := range r.events {
		k := e.Kind.String()
		if e.Kind == leasehold.EventAcquire && e.Err != nil {
			k += ":refused"
		}
		ks = append(ks, k)
	}
	return ks
}
