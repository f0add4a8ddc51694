package sessionpool

import (
	"errors"
	"testing"
	"time"
)

// rec is a grant of the tests' cores: an owner and a token.
type rec struct {
	owner string
	token int
}

func (r rec) is(owner string, token int) func(rec) bool {
	return func(g rec) bool { return g.owner == owner && g.token == token }
}

// testCore is a Core of class 1 s whose Forget calls are counted.
type testCore struct {
	Core[string, rec, string]
	forgot int
}

func newTestCore(idle time.Duration) *testCore {
	c := &testCore{}
	c.Init(Config[string, rec, string]{
		Class:  time.Second,
		Idle:   idle,
		Forget: func() { c.forgot++ },
		Orphan: func(k string, g rec) string { return k },
	})
	return c
}

// poked reports whether housekeeping was woken, and takes the wake-up.
func (c *testCore) poked() bool {
	select {
	case <-c.kick:
		return true
	default:
		return false
	}
}

func TestHoldDrop(t *testing.T) {
	tests := []struct {
		name      string
		idle      time.Duration
		grant     bool
		wantPoked bool
	}{
		{"ends idle at once: poked", -1, false, true},
		{"keeps idle sessions: not poked", time.Minute, false, false},
		{"holds a grant: not poked", -1, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCore(tt.idle)
			if tt.grant {
				c.Track("a", rec{"o", 1}, time.Now())
				c.poked()
			}
			if !c.Hold() {
				t.Fatal("Hold on a live session failed")
			}
			c.Drop()
			if c.poked() {
				t.Error("poked with a reference left (the creator's)")
			}
			c.Drop()
			if got := c.poked(); got != tt.wantPoked {
				t.Errorf("last Drop poked: %v, want %v", got, tt.wantPoked)
			}
			c.Retire()
			if c.Hold() {
				t.Error("Hold on a retired session took a reference")
			}
			if c.forgot != 1 {
				t.Errorf("Retire called Forget %d times, want 1", c.forgot)
			}
		})
	}
}

func TestGrantTable(t *testing.T) {
	t0 := time.Now()
	tests := []struct {
		name    string
		run     func(c *testCore) (time.Duration, bool)
		want    bool
		wantTTL time.Duration
	}{
		{"renewed in time", func(c *testCore) (time.Duration, bool) {
			return c.Renewed("a", rec{}.is("o", 1), t0.Add(500*time.Millisecond))
		}, true, time.Second},
		{"renewed after the deadline", func(c *testCore) (time.Duration, bool) {
			return c.Renewed("a", rec{}.is("o", 1), t0.Add(1001*time.Millisecond))
		}, false, 0},
		{"renewed by another owner", func(c *testCore) (time.Duration, bool) {
			return c.Renewed("a", rec{}.is("p", 1), t0)
		}, false, 0},
		{"renewed with another token", func(c *testCore) (time.Duration, bool) {
			return c.Renewed("a", rec{}.is("o", 2), t0)
		}, false, 0},
		{"renewed once lost", func(c *testCore) (time.Duration, bool) {
			c.MarkLost(nil, nil)
			return c.Renewed("a", rec{}.is("o", 1), t0)
		}, false, 0},
		{"renewed once untracked", func(c *testCore) (time.Duration, bool) {
			c.Untrack("a", rec{}.is("o", 1), nil)
			return c.Renewed("a", rec{}.is("o", 1), t0)
		}, false, 0},
		{"untrack by another owner changes nothing", func(c *testCore) (time.Duration, bool) {
			c.Untrack("a", rec{}.is("p", 1), func(rec) { panic("called") })
			return c.Renewed("a", rec{}.is("o", 1), t0)
		}, true, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCore(time.Minute)
			c.Extend(t0.Add(time.Hour))
			if _, ok := c.Track("a", rec{"o", 1}, t0); !ok {
				t.Fatal("Track on a live session failed")
			}
			ttl, ok := tt.run(c)
			if ok != tt.want || ttl != tt.wantTTL {
				t.Errorf("got %s, %v; want %s, %v", ttl, ok, tt.wantTTL, tt.want)
			}
		})
	}
}

func TestDeadline(t *testing.T) {
	c := newTestCore(time.Minute)
	t0 := time.Now().Add(-900 * time.Millisecond)
	c.Track("a", rec{"o", 1}, t0)
	if _, ok := c.Tracked("a", rec{}.is("o", 1), t0.Add(time.Second)); !ok {
		t.Error("Tracked at the deadline: not kept")
	}
	if _, ok := c.Tracked("a", rec{}.is("o", 1), t0.Add(time.Second+1)); ok {
		t.Error("Tracked after the deadline: kept")
	}
	if _, ok := c.Tracked("a", rec{}.is("o", 1), time.Time{}); !ok {
		t.Error("Tracked at a zero time (any deadline): not kept")
	}
	// A renewal sent earlier than the last one does not move the deadline back.
	c.Renewed("a", rec{}.is("o", 1), t0.Add(500*time.Millisecond))
	c.Renewed("a", rec{}.is("o", 1), t0.Add(100*time.Millisecond))
	if _, ok := c.Tracked("a", rec{}.is("o", 1), t0.Add(1400*time.Millisecond)); !ok {
		t.Error("an older renewal moved the deadline back")
	}
	if d, ok := c.Remaining("a", rec{}.is("o", 1)); !ok || d <= 0 {
		t.Errorf("Remaining = %s, %v; want time left", d, ok)
	}
	if _, ok := c.Remaining("a", rec{}.is("o", 2)); ok {
		t.Error("Remaining of another token: found")
	}
}

func TestTakeSettle(t *testing.T) {
	tests := []struct {
		name        string
		answered    bool
		lost        bool
		wantFreed   bool
		wantKept    bool
		wantTracked bool
	}{
		{"answered: gone for good", true, false, true, false, false},
		{"unanswered: tracked again", false, false, false, true, true},
		{"unanswered, session lost: not tracked again", false, true, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCore(time.Minute)
			c.Track("a", rec{"o", 1}, time.Now())
			if _, ok := c.Take("a", rec{}.is("o", 2)); ok {
				t.Fatal("Take of another token succeeded")
			}
			e, ok := c.Take("a", rec{}.is("o", 1))
			if !ok {
				t.Fatal("Take of a tracked grant failed")
			}
			if !c.Acquiring("a") {
				t.Error("a grant being released is not busy")
			}
			if _, ok := c.Kept("a", rec{}.is("o", 1)); ok {
				t.Error("a grant being released is still in the table")
			}
			if tt.lost {
				c.MarkLost(nil, nil)
			}
			var freed, kept bool
			c.Settle("a", e, tt.answered, func(rec) { freed = true }, func(rec) { kept = true })
			_, tracked := c.Kept("a", rec{}.is("o", 1))
			if freed != tt.wantFreed || kept != tt.wantKept || tracked != tt.wantTracked {
				t.Errorf("freed %v, kept %v, tracked %v; want %v, %v, %v", freed, kept, tracked, tt.wantFreed, tt.wantKept, tt.wantTracked)
			}
			if c.Acquiring("a") {
				t.Error("still busy after Settle")
			}
		})
	}
}

func TestMarkLost(t *testing.T) {
	c := newTestCore(time.Minute)
	c.Track("a", rec{"o", 1}, time.Now())
	c.AddOrphan("b")
	why := errors.New("data lost")
	locked := 0
	if !c.MarkLost(why, func() { locked++ }) {
		t.Fatal("the first MarkLost reported it was not first")
	}
	if c.MarkLost(nil, func() { locked++ }) {
		t.Error("a second MarkLost reported it was first")
	}
	if !c.IsLost() || c.LostErr() != why || c.forgot != 1 || locked != 1 {
		t.Errorf("lost %v, why %v, Forget calls %d, locked calls %d; want true, %v, 1, 1", c.IsLost(), c.LostErr(), c.forgot, locked, why)
	}
	select {
	case <-c.Stop():
	default:
		t.Error("Stop not closed by the loss")
	}
	if _, ok := c.Kept("a", rec{}.is("o", 1)); ok || c.Orphans() != 0 {
		t.Error("grants or orphans kept past the loss")
	}
	c.AddOrphan("c")
	if c.Orphans() != 0 {
		t.Error("an orphan queued on a lost session")
	}
	if _, ok := c.Track("d", rec{"o", 1}, time.Now()); ok {
		t.Error("a grant tracked on a lost session")
	}
}

func TestShut(t *testing.T) {
	tests := []struct {
		name                     string
		started, grant, lost     bool
		wantStarted, wantHolding bool
	}{
		{"never started", false, false, false, false, false},
		{"started, idle", true, false, false, true, false},
		{"started, holding", true, true, false, true, true},
		{"lost", true, false, true, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCore(time.Minute)
			if tt.started {
				c.Started(time.Now().Add(time.Hour))
			}
			if tt.grant {
				c.Track("a", rec{"o", 1}, time.Now())
			}
			if tt.lost {
				c.MarkLost(nil, nil)
			}
			started, holding := c.Shut()
			if started != tt.wantStarted || holding != tt.wantHolding {
				t.Errorf("Shut = %v, %v; want %v, %v", started, holding, tt.wantStarted, tt.wantHolding)
			}
			if c.Hold() {
				t.Error("Hold after Shut took a reference")
			}
		})
	}
}

func TestSetUpWith(t *testing.T) {
	errStart, errClosed := errors.New("refused"), errors.New("closed")
	tests := []struct {
		name     string
		startErr error
		open     bool
		wantErr  error
		wantUndo bool
	}{
		{"up", nil, true, nil, false},
		{"start failed", errStart, true, errStart, false},
		{"store closed meanwhile", nil, false, errClosed, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCore(time.Minute)
			undone := false
			c.SetUpWith(func() error { return tt.startErr }, func() bool { return tt.open },
				func() { undone = true }, func() error { return errClosed })
			<-c.Up()
			if c.UpErr() != tt.wantErr || undone != tt.wantUndo {
				t.Errorf("UpErr %v, undone %v; want %v, %v", c.UpErr(), undone, tt.wantErr, tt.wantUndo)
			}
			retired := tt.wantErr != nil
			if got := c.forgot == 1; got != retired {
				t.Errorf("retired (forgotten) %v, want %v", got, retired)
			}
		})
	}
}
