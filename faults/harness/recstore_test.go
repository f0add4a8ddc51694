package harness

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/faults/history"
	"github.com/leasehold-go/leasehold/memory"
)

type events struct {
	mu sync.Mutex
	es []history.Event
}

func (e *events) Record(ev history.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.es = append(e.es, ev)
}

// The recording wrapper keeps the store's optional capabilities (the memory
// store is a Notifier and a Lister; the old wrapper dropped Lister) and
// records the calls it passes on.
func TestWrapStoreKeepsCapabilitiesAndRecords(t *testing.T) {
	rec := &events{}
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
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.es) != 1 || rec.es[0].Kind != history.EvStoreAcquire || rec.es[0].Token != g.Token || rec.es[0].Key != "k" {
		t.Errorf("recorded %+v; want one acquire of k with token %d", rec.es, g.Token)
	}
}
