package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/dedupe"
	"github.com/leasehold-go/leasehold/fence"
)

func TestParseLayers(t *testing.T) {
	for _, s := range []string{"all", "none", "fence", "dedupe,lease", "fence,lease", "fence,dedupe"} {
		l, err := parseLayers(s)
		if err != nil || l.String() != s {
			t.Errorf("parseLayers(%q) = %v, %v; String %q", s, l, err, l.String())
		}
	}
	if l, _ := parseLayers("lease,dedupe,fence"); l != allLayers() {
		t.Errorf("the three layers listed = %+v, want all", l)
	}
	if _, err := parseLayers("fence,locks"); err == nil {
		t.Error("an unknown layer was accepted")
	}
}

// The stream has what the run needs: duplicates both adjacent and far
// apart, slow messages of both lengths, each 2.5 x vt one enqueued twice.
func TestMakePlan(t *testing.T) {
	vt := 2 * time.Second
	p := makePlan(200, vt, 1)
	rows := map[string][]int{}
	work := map[string]int{}
	for i, m := range p.msgs {
		rows[m.MsgID] = append(rows[m.MsgID], i)
		work[m.MsgID] = m.WorkMS
	}
	if len(rows) != p.ids || p.ids != 200 || len(p.msgs) != p.ids+p.dupIDs {
		t.Fatalf("%d rows of %d ids (plan says %d ids, %d enqueued twice)", len(p.msgs), len(rows), p.ids, p.dupIDs)
	}
	var adjacent, far, slow, slowTwice int
	for id, r := range rows {
		switch {
		case len(r) == 2 && r[1] == r[0]+1:
			adjacent++
		case len(r) == 2:
			far++
		case len(r) > 2:
			t.Errorf("%s enqueued %d times", id, len(r))
		}
		if time.Duration(work[id])*time.Millisecond > vt {
			slow++
			if time.Duration(work[id])*time.Millisecond > 2*vt && len(r) == 2 {
				slowTwice++
			}
		}
	}
	if adjacent == 0 || far == 0 || slow != p.slow || slow != 4 || slowTwice != 2 {
		t.Errorf("adjacent duplicates %d, far %d, slow %d (plan %d), 2.5 x vt ones enqueued twice %d",
			adjacent, far, slow, p.slow, slowTwice)
	}
}

// Faults are spread over the first half of the run, kills alternating
// between their two points.
func TestPlanFaults(t *testing.T) {
	fs := planFaults(2, 1, 222)
	var got []string
	for _, f := range fs {
		got = append(got, fmt.Sprintf("%s@%d", f.point, f.after))
	}
	want := "[hold-work@27 stall@55 hold-ack@83]"
	if fmt.Sprint(got) != want {
		t.Errorf("planFaults = %v, want %s", got, want)
	}
}

// A delivery is acked only when its message's effect is known to be made.
func TestClassify(t *testing.T) {
	lost := &leasehold.LostError{Key: "msg/m", Reason: leasehold.ErrExpired}
	for _, c := range []struct {
		committed bool
		res       dedupe.Result
		err       error
		kind      string
		ack       bool
	}{
		{true, dedupe.Processed, nil, "processed", true},
		{true, dedupe.Processed, lost, "processed", true}, // the effect and its mark committed
		{false, dedupe.Duplicate, nil, "dedupe", true},
		{false, dedupe.Failed, dedupe.ErrDuplicate, "dedupe", true},
		{false, dedupe.Failed, errors.Join(&fence.StaleError{Token: 1, Highest: 2}, lost), "fence", false},
		{false, dedupe.Failed, &leasehold.HeldError{Key: "msg/m"}, "lease", false},
		{false, dedupe.Failed, lost, "error", false},
	} {
		o := classify(c.committed, c.res, c.err)
		if o.kind != c.kind || o.ack != c.ack {
			t.Errorf("classify(%v, %v, %v) = %s ack %v, want %s ack %v", c.committed, c.res, c.err, o.kind, o.ack, c.kind, c.ack)
		}
	}
}

// The verdict fails on every kind of miss.
func TestSummaryCheck(t *testing.T) {
	ok := summary{Messages: 10, Rows: 11, Once: 10}
	if err := ok.check(); err != nil {
		t.Fatalf("a clean run: %v", err)
	}
	for name, s := range map[string]summary{
		"doubled": {Messages: 10, Rows: 11, Once: 9, Doubled: 1},
		"missing": {Messages: 10, Rows: 11, Once: 9, Missing: 1},
		"unacked": {Messages: 10, Rows: 11, Once: 10, Unacked: 1},
		"empty":   {},
		// The README: with the fence on, a paused write must be refused
		// by the fence; one that ended as a timeout (or any other error)
		// leaves the fence untested.
		"paused write timed out": {Layers: allLayers(), Messages: 10, Rows: 11, Once: 10, Stalled: []string{"fence", "error"}},
		"paused write deduped":   {Layers: allLayers(), Messages: 10, Rows: 11, Once: 10, Stalled: []string{"dedupe"}},
	} {
		if err := s.check(); err == nil {
			t.Errorf("%s: check passed", name)
		} else if strings.HasPrefix(name, "paused") && !strings.Contains(s.String(), "FAIL paused write") {
			t.Errorf("%s: summary line %q does not say which paused write failed", name, s.String())
		}
	}
	// Without the fence (a negative control) a paused write is what the
	// other layers make of it.
	nofence := summary{Layers: layers{Dedupe: true, Lease: true}, Messages: 10, Rows: 11, Once: 10, Stalled: []string{"dedupe"}}
	if err := nofence.check(); err != nil {
		t.Errorf("without the fence: %v", err)
	}
	fenced := summary{Layers: allLayers(), Messages: 10, Rows: 11, Once: 10, Stalled: []string{"fence"}}
	if err := fenced.check(); err != nil {
		t.Errorf("a paused write refused by the fence: %v", err)
	}
}

// connEnded tells the server ending a stopped worker's connection (the
// effect goes out again) from every other error (it does not).
func TestConnEnded(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("fence: fencing x: %w", &pgconn.PgError{Severity: "FATAL", Code: "25P03"}), true},
		{&pgconn.PgError{Severity: "FATAL", Code: "57P01"}, true},
		{&pgconn.PgError{Code: "40001"}, false},
		{fence.ErrStale, false},
		{errors.New("FATAL: terminating connection due to idle-in-transaction timeout (SQLSTATE 25P03)"), false},
		{nil, false},
	} {
		if got := connEnded(c.err); got != c.want {
			t.Errorf("connEnded(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
