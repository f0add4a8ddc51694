package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/memory"
)

func TestPrims(t *testing.T) {
	st := memory.New(nil)
	defer st.Close()
	prefix := NewPrefix()
	res, err := Prims(context.Background(), st, PrimOptions{
		Name: "Mem store", Slots: 4, Duration: 100 * time.Millisecond,
		Contenders: 8, Handoffs: 20, Hold: 2 * time.Millisecond, Prefix: prefix,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 0 {
		t.Fatalf("%d errors, the first: %s", res.Errors, res.FirstError)
	}
	if len(res.Sides) != len(primSides) {
		t.Fatalf("%d sides, want %d", len(res.Sides), len(primSides))
	}
	// Store calls per cycle, counted: a plain cycle and a free semaphore's
	// are one acquire and one release; a reader passes the gate (4 calls).
	want := map[string]float64{SidePlain: 2, SideSemFree: 2, SideRead: 4}
	for _, s := range res.Sides {
		if s.Cycles == 0 || s.Cycle <= 0 || s.OverPlain <= 0 {
			t.Errorf("side %s measured nothing: %+v", s.Name, s)
		}
		if w, ok := want[s.Name]; ok && s.Calls != w {
			t.Errorf("side %s: %.2f store calls per cycle, want %.0f", s.Name, s.Calls, w)
		}
	}
	if plain, _ := res.Side(SidePlain); plain.OverPlain != 1 {
		t.Errorf("plain over plain = %v, want 1", plain.OverPlain)
	}
	if !res.Notifier || res.Handoff.N != 20 || res.AttemptsPerHandoff <= 0 {
		t.Errorf("hand-offs: notifier %v, %d timed, %.1f attempts each", res.Notifier, res.Handoff.N, res.AttemptsPerHandoff)
	}
	if keys := leftover(t, st, prefix); len(keys) != 0 {
		t.Errorf("leases left held: %v", keys)
	}

	var b bytes.Buffer
	if err := WritePrimsSummary(&b, []PrimResult{res}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"sem-free-over-plain-mem-store ", "sem-busy-over-plain-mem-store ", "rw-read-over-plain-mem-store ",
		"rw-write-over-plain-mem-store ", "sem-handoff-p50-ms-mem-store ", "sem-handoff-p99-ms-mem-store "} {
		if !strings.Contains(b.String(), "SUMMARY "+id) {
			t.Errorf("summary lacks %q:\n%s", id, b.String())
		}
	}
	b.Reset()
	if err := WritePrimsTable(&b, []PrimResult{res}, Markdown); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| Mem store | semaphore-busy |") {
		t.Errorf("table lacks the busy semaphore's row:\n%s", b.String())
	}
}

func TestPrimID(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"redis", "redis"},
		{"etcd-1", "etcd-1"},
		{"Mem store", "mem-store"},
		{"postgres (2)", "postgres-2"},
		{"--x__Y--", "x-y"},
	} {
		if got := primID(c.in); got != c.want {
			t.Errorf("primID(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
