package harness

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold/internal/testserver"

	"github.com/leasehold-go/leasehold/faults/check"
)

// The fault table has one row per class of the catalogue the report lists,
// in the same order, each with its applicability and its injector.
func TestFaultTableMatchesCatalogue(t *testing.T) {
	var ids []string
	for _, f := range faultTable {
		ids = append(ids, f.id)
		if f.applies == nil || f.inject == nil {
			t.Errorf("%s: no applicability or no injector", f.id)
		}
	}
	if want := check.IDs(check.Faults); !slices.Equal(ids, want) {
		t.Fatalf("fault table %v, catalogue %v", ids, want)
	}
	if _, err := faultByID("F99"); err == nil {
		t.Error("an unknown class has a row")
	}
}

// The embedded store, which has no network and no server process, runs the
// classes that need neither (F2 twice) and notes why it skips the others.
func TestClassesOnTheEmbeddedStore(t *testing.T) {
	h := &harness{cfg: RunConfig{Backend: &SQLite{}}}
	got := h.classes()
	want := []string{"F1", "F2", "F2", "F3", "F6", "F9", "F12", "F12b"}
	if !slices.Equal(got, want) {
		t.Fatalf("classes %v, want %v", got, want)
	}
	for _, c := range []string{"F4", "F5", "F5c", "F7", "F8", "F9b", "F9m", "F9k", "F10", "F11", "F17"} {
		found := false
		for _, n := range h.notes {
			if len(n) > len(c) && n[:len(c)+2] == c+" (" {
				found = true
			}
		}
		if !found {
			t.Errorf("no note says why %s is not run: %v", c, h.notes)
		}
	}
	h = &harness{cfg: RunConfig{Backend: &SQLite{}, Faults: []string{"F2", "F8"}}}
	if got := h.classes(); !slices.Equal(got, []string{"F2"}) || len(h.notes) != 1 {
		t.Errorf("restricted to F2 and F8: classes %v, notes %v", got, h.notes)
	}
}

// A replicated store with a network (the ZooKeeper and Consul backends, not
// started) runs every class but those of other stores' capabilities, and
// its notes only say why a class is not run: a class that applies adds no
// note of its own.
func TestClassesOnReplicatedStores(t *testing.T) {
	zk := &ZooKeeper{z: &testserver.ZooKeeper{Nodes: []*testserver.ZooKeeperNode{{ID: 1, Port: 1}, {ID: 2, Port: 2}, {ID: 3, Port: 3}}}}
	cs := &Consul{c: &testserver.Consul{Agents: []*testserver.ConsulAgent{{HTTPPort: 1}, {HTTPPort: 2}, {HTTPPort: 3}}}}
	base := []string{"F1", "F2", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9", "F10", "F12", "F12b"}
	// Consul also runs F9b: its servers restarted without their data are
	// what a -dev agent's restart is.
	withWipe := []string{"F1", "F2", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9", "F9b", "F10", "F12", "F12b"}
	for _, c := range []struct {
		b     Backend
		want  []string
		notes int
	}{{zk, base, 10}, {cs, withWipe, 9}} { // notes: F5c, F9b (not Consul), F9m, F9k, F11, F13-F16, F17 (no WallHolderCmd)
		b := c.b
		h := &harness{cfg: RunConfig{Backend: b}}
		if got := h.classes(); !slices.Equal(got, c.want) {
			t.Errorf("%s: classes %v, want %v", b.Name(), got, c.want)
		}
		for _, n := range h.notes {
			if !strings.Contains(n, "): not run: ") {
				t.Errorf("%s: a note that is not a class not run: %q", b.Name(), n)
			}
		}
		if len(h.notes) != c.notes {
			t.Errorf("%s: notes %q, want %d", b.Name(), h.notes, c.notes)
		}
	}
}

// The S3 store (versitygw) has a network and a server process to pause and
// restart, but no clock the harness can step: F11's note says why, and the
// classes that apply add no note of their own.
func TestClassesOnS3(t *testing.T) {
	h := &harness{cfg: RunConfig{Backend: &S3{srv: &testserver.Versity{Port: 1}}}}
	got := h.classes()
	want := []string{"F1", "F2", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9", "F12", "F12b"}
	if !slices.Equal(got, want) {
		t.Fatalf("classes %v, want %v", got, want)
	}
	for _, n := range h.notes {
		if !strings.Contains(n, "not run") {
			t.Errorf("a note on a class that runs: %q", n)
		}
	}
	if !slices.ContainsFunc(h.notes, func(n string) bool { return strings.HasPrefix(n, "F11 (") && strings.Contains(n, s3ClockNote) }) {
		t.Errorf("no note says why F11 is not run: %v", h.notes)
	}
}

// The kube store (an apiserver over its etcd) runs, besides the network
// and server classes, F9k, its etcd restarted under it; F11's note says
// why its clock is not stepped.
func TestClassesOnKube(t *testing.T) {
	h := &harness{cfg: RunConfig{Backend: &Kube{k: &testserver.Kube{Port: 1}}}}
	got := h.classes()
	want := []string{"F1", "F2", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9", "F9k", "F12", "F12b"}
	if !slices.Equal(got, want) {
		t.Fatalf("classes %v, want %v", got, want)
	}
	if !slices.ContainsFunc(h.notes, func(n string) bool { return strings.HasPrefix(n, "F11 (") && strings.Contains(n, kubeClockNote) }) {
		t.Errorf("no note says why F11 is not run: %v", h.notes)
	}
	if slices.ContainsFunc(h.notes, func(n string) bool { return !strings.Contains(n, "): not run: ") }) {
		t.Errorf("a note that is not a class not run: %q", h.notes)
	}
}

// netStore is a networked store with a server to pause and restart and
// nothing else, for the fault table's notes.
type netStore struct{ SQLite }

func (netStore) Endpoints() []string                      { return []string{"127.0.0.1:1"} }
func (netStore) PauseStore() error                        { return nil }
func (netStore) ResumeStore() error                       { return nil }
func (netStore) KillStore() error                         { return nil }
func (netStore) RestartStore(context.Context, bool) error { return nil }

// A networked store runs the network and store classes, and its notes say
// only why the classes it skips are skipped: none claims it has no network
// or no server.
func TestClassesOnANetworkedStore(t *testing.T) {
	h := &harness{cfg: RunConfig{Backend: &netStore{}}}
	got := h.classes()
	want := []string{"F1", "F2", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9", "F12", "F12b"}
	if !slices.Equal(got, want) {
		t.Fatalf("classes %v, want %v", got, want)
	}
	for _, n := range h.notes {
		if strings.Contains(n, "no network") || strings.Contains(n, "no server process") {
			t.Errorf("note on a networked store with a server: %q", n)
		}
	}
}

// F17 runs on every store when the harness has the holder built with the
// patched time package, and is noted as not run, with why, when it has
// not; on the embedded store, whose expiries are the host's wall time, a
// remark says what the step means there.
func TestWallStepApplies(t *testing.T) {
	wall := []string{"/bin/faults-wallclock", "holder"}
	for _, c := range []struct {
		name string
		b    Backend
		wall []string
		runs bool
		note string
	}{
		{"embedded, no wall holder", &SQLite{}, nil, false, "F17 (" + check.Describe(check.F17) + "): not run: no holder built with the patched time package"},
		{"networked, no wall holder", &netStore{}, nil, false, "): not run: no holder built with the patched time package"},
		{"embedded", &SQLite{}, wall, true, "F17 on the embedded store: its expiries are the host's wall time"},
		{"networked", &netStore{}, wall, true, ""},
	} {
		h := &harness{cfg: RunConfig{Backend: c.b, WallHolderCmd: c.wall, Faults: []string{check.F17}}}
		got := h.classes()
		if runs := slices.Equal(got, []string{check.F17}); runs != c.runs {
			t.Errorf("%s: classes %v, want F17 run: %v", c.name, got, c.runs)
		}
		switch {
		case c.note == "" && len(h.notes) != 0:
			t.Errorf("%s: notes %q, want none", c.name, h.notes)
		case c.note != "" && (len(h.notes) != 1 || !strings.Contains(h.notes[0], c.note)):
			t.Errorf("%s: notes %q, want one with %q", c.name, h.notes, c.note)
		}
	}
}

// Concurrent holders under F17 are a missed target on a networked store
// (its clock is the server's) and not on the embedded one (the holder's
// wall clock is its clock).
func TestJudgeWallStep(t *testing.T) {
	for _, c := range []struct {
		b      Backend
		double map[string]int
		missed int
	}{
		{&netStore{}, map[string]int{check.F17: 2}, 1},
		{&netStore{}, map[string]int{check.F12: 2, "none": 1}, 0},
		{&SQLite{}, map[string]int{check.F17: 2}, 0},
	} {
		h := &harness{cfg: RunConfig{Backend: c.b}}
		r := &check.RunResult{Metrics: &check.Metrics{DoubleByFault: c.double}}
		h.judgeWallStep(r)
		if len(r.Missed) != c.missed {
			t.Errorf("%s, concurrent holders %v: missed %q, want %d", c.b.Name(), c.double, r.Missed, c.missed)
		}
	}
}
