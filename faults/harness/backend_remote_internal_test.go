package harness

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
)

// The remote rows: every fault of a networked store with a server process
// applies (the link faults hit the client-server link, F8 and F9 the
// server), F9b is noted with why, and the notes say what F9 does to the
// grants, kept or portable.
func TestClassesOnRemote(t *testing.T) {
	for _, kept := range []bool{false, true} {
		b := NewRemote("remote-x", &SQLite{}, false)
		b.addr, b.kept = "127.0.0.1:1", kept
		h := &harness{cfg: RunConfig{Backend: b}}
		got := h.classes()
		want := []string{"F1", "F2", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9", "F12", "F12b"}
		if !slices.Equal(got, want) {
			t.Fatalf("kept %v: classes %v, want %v", kept, got, want)
		}
		notes := strings.Join(h.notes, "\n")
		if !strings.Contains(notes, check.F9b+" ") || !strings.Contains(notes, "keeps no data") {
			t.Errorf("kept %v: F9b not noted as not applying, with why: %s", kept, notes)
		}
		f9 := map[bool]string{false: "portable", true: "next renewal is refused"}[kept]
		if !strings.Contains(notes, f9) {
			t.Errorf("kept %v: no note on F9 saying %q: %s", kept, f9, notes)
		}
	}
}

// The takeover bound through the server: the served store's, and where the
// server keeps the grants, at least the TTL, its sweep and 100 ms.
func TestRemoteTakeoverBound(t *testing.T) {
	tests := []struct {
		served Backend
		kept   bool
		ttl    time.Duration
		want   float64 // x TTL
	}{
		{&SQLite{}, false, time.Second, 4.0 / 3},
		{&SQLite{}, true, time.Second, 2.1},
		{&SQLite{}, true, 3 * time.Second, 4.1 / 3},
		{&Etcd{}, false, time.Second, 2.6},
		{&Etcd{}, true, time.Second, 2.6},
		{&Postgres{Mode: "advisory"}, true, 750 * time.Millisecond, 1.85 / 0.75},
	}
	for _, tc := range tests {
		b := NewRemote("remote-x", tc.served, false)
		b.kept = tc.kept
		if got := b.TakeoverBound(tc.ttl); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s kept %v: TakeoverBound(%s) = %.4f x TTL, want %.4f", tc.served.Name(), tc.kept, tc.ttl, got, tc.want)
		}
	}
}

// A remote row needs the leasehold binary, and says so.
func TestRemoteNeedsLeasehold(t *testing.T) {
	b := NewRemote("remote-sqlite", &SQLite{}, false)
	err := b.Start(t.Context(), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "leasehold binary") {
		t.Fatalf("Start without the binary: %v", err)
	}
	if got := b.URL([]string{"127.0.0.1:9"}); got != "leasehold+http://127.0.0.1:9" {
		t.Errorf("URL = %q", got)
	}
}
