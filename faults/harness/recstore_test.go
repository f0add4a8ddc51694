package harness

import (
	"context"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/faults/history"
	"github.com/leasehold-go/leasehold/memory"
)

// The recording wrapper keeps the store's optional capabilities (the memory
// store is a Notifier and a Lister; the old wrapper dropped Lister) and
// records the calls it passes on.
func TestWrapStoreKeepsCapabilitiesAndRecords(t *testing.T) {
	rec := history.NewMemRecorder("h", nil)
	s, _ := WrapStore(memory.New(nil), rec)
	if _, ok := s.(leasehold.Notifier); !ok {
		t.Error("the wrapper dropped Notifier")
	}
	if _, ok := s.(leasehold.Lister); !ok {
		t.Error("the wrapper dropped Lister")
	}
	if _, ok := s.(leasehold.Waiter); ok {
		t.Error("the wrapper offers Waiter, which the memory store lacks")
	}
	ctx := context.Background()
	req := leasehold.AcquireRequest{Key: "k", Owner: leasehold.NewOwnerID(), TTL: time.Minute}
	g, err := s.Acquire(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	es := rec.Events()
	if len(es) != 1 || es[0].Kind != history.EvStoreAcquire || es[0].Token != g.Token || es[0].Key != "k" {
		t.Errorf("recorded %+v; want one acquire of k with token %d", es, g.Token)
	}
}
