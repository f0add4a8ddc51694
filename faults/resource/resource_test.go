package resource_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/history"
	"github.com/leasehold-go/leasehold/faults/resource"
)

func startResource(t *testing.T, disabled bool) (*resource.Server, *history.MemRecorder, *resource.Client) {
	t.Helper()
	rec := history.NewMemRecorder("res", nil)
	r := resource.New(rec, disabled)
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(func() {
		hc.CloseIdleConnections()
		r.Close()
	})
	return r, rec, &resource.Client{Base: r.URL(), Holder: "h", HTTP: hc}
}

func TestResourceFencesStaleWrites(t *testing.T) {
	ctx := context.Background()
	r, rec, c := startResource(t, false)
	for _, w := range []struct {
		tok  uint64
		want int
	}{{5, 204}, {5, 204}, {7, 204}, {6, 409}, {7, 204}} {
		st, err := c.WriteRegister(ctx, "k", "o", "r", w.tok, 1)
		if err != nil || st != w.want {
			t.Fatalf("write with token %d: %d, %v; want %d", w.tok, st, err, w.want)
		}
	}
	v, err := c.Read(ctx, "k", "o", "r1", 7)
	if err != nil || v != 0 {
		t.Fatalf("read %d, %v", v, err)
	}
	if st, err := c.WriteCounter(ctx, "k", "o", "r1", 7, v+1); err != nil || st != 204 {
		t.Fatalf("counter write %d, %v", st, err)
	}
	if r.Counter("k") != 1 {
		t.Fatalf("counter %d", r.Counter("k"))
	}
	m := check.Run(rec.Events(), check.Params{})
	if m.Saves != 1 || m.StaleAccepted != 0 || m.FencedWrites != 5 {
		t.Fatalf("saves %d stale %d writes %d", m.Saves, m.StaleAccepted, m.FencedWrites)
	}
}

func TestResourceMutationAdmitsStaleWrites(t *testing.T) {
	ctx := context.Background()
	_, rec, c := startResource(t, true)
	for _, tok := range []uint64{7, 6} {
		if st, err := c.WriteRegister(ctx, "k", "o", "r", tok, 1); err != nil || st != 204 {
			t.Fatalf("write with token %d: %d, %v", tok, st, err)
		}
	}
	if m := check.Run(rec.Events(), check.Params{}); m.StaleAccepted != 1 {
		t.Fatalf("stale accepted %d with the fence disabled, want 1", m.StaleAccepted)
	}
}
