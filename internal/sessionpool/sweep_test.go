package sessionpool

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestExpiry(t *testing.T) {
	t0 := time.Now()
	c := newTestCore(time.Minute)
	c.Started(t0.Add(1500 * time.Millisecond))
	c.Extend(t0.Add(time.Second)) // earlier: ignored
	if !c.Expiry().Equal(t0.Add(1500 * time.Millisecond)) {
		t.Errorf("an earlier Extend moved the expiry back")
	}
	if !c.Covers(t0) || c.Covers(t0.Add(600*time.Millisecond)) {
		t.Error("Covers: want a class (1 s) left at t0 only")
	}
	if ttl, _ := c.Track("a", rec{"o", 1}, t0.Add(1499*time.Millisecond)); ttl != time.Millisecond {
		t.Errorf("Track near the expiry: TTL %s, want the 1 ms floor", ttl)
	}
	if c.ExpiredAt(t0.Add(1499*time.Millisecond)) || !c.ExpiredAt(t0.Add(1500*time.Millisecond)) {
		t.Error("ExpiredAt: want expired from the bound on")
	}
}

func TestFresh(t *testing.T) {
	errDown, errOverdue := errors.New("down"), errors.New("overdue")
	tests := []struct {
		name        string
		expiry      time.Duration // after now
		refresh     time.Duration // the refresh's new bound, after t0
		refreshErr  error
		wantErr     error
		wantRefresh bool
	}{
		{"covered: no refresh", time.Hour, 0, nil, nil, false},
		{"refreshed", 0, time.Hour, nil, nil, true},
		{"refresh failed", 0, 0, errDown, errDown, true},
		{"refresh not enough", 0, 500 * time.Millisecond, nil, errOverdue, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCore(time.Minute)
			c.Started(time.Now().Add(tt.expiry))
			called := false
			_, err := c.Fresh(func(t0 time.Time) error {
				called = true
				if tt.refreshErr == nil {
					c.Extend(t0.Add(tt.refresh))
				}
				return tt.refreshErr
			}, func() error { return errOverdue })
			if err != tt.wantErr || called != tt.wantRefresh {
				t.Errorf("Fresh: %v, refreshed %v; want %v, %v", err, called, tt.wantErr, tt.wantRefresh)
			}
		})
	}
}

// TestKeepAlive runs the loop on a script of outcomes: a success moves the
// bound; failures with the bound passed end it as expired; a gone answer
// ends it as gone; a stopped one or Stop ends it quietly.
func TestKeepAlive(t *testing.T) {
	tests := []struct {
		name   string
		script []Outcome
		want   string
	}{
		{"gone", []Outcome{KeepOK, KeepGone}, "gone"},
		{"expired", []Outcome{KeepOK, KeepFailed}, "expired"},
		{"stopped", []Outcome{KeepOK, KeepStopped}, "stopped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCore(time.Minute)
			c.Started(time.Now().Add(time.Hour))
			n := 0
			got := "stopped"
			c.KeepAlive(time.Now(), time.Millisecond, func() Outcome {
				res := tt.script[n]
				n++
				switch res {
				case KeepOK:
					c.Extend(time.Now().Add(time.Hour))
				case KeepFailed:
					c.Mu.Lock()
					c.expiry = time.Time{} // the bound has passed
					c.Mu.Unlock()
				}
				return res
			}, func() { got = "gone" }, func() { got = "expired" })
			if got != tt.want || n != len(tt.script) {
				t.Errorf("ended %s after %d keepalives, want %s after %d", got, n, tt.want, len(tt.script))
			}
		})
	}
	c := newTestCore(time.Minute)
	c.Halt()
	c.KeepAlive(time.Now(), time.Hour, func() Outcome { t.Error("keepalive after Stop"); return KeepOK }, nil, nil)
}

func TestSweep(t *testing.T) {
	tests := []struct {
		name       string
		fail       bool
		lose       bool // the session is lost during the clean-up
		wantQueued int
	}{
		{"settled", false, false, 0},
		{"failed: queued again", true, false, 2},
		{"failed, lost meanwhile: dropped", true, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCore(time.Minute)
			past := time.Now().Add(-2 * time.Second)
			c.Track("old", rec{"o", 1}, past)
			c.Track("new", rec{"o", 2}, time.Now())
			c.AddOrphan("orphan")
			var got []string
			locked := false
			c.Sweep(context.Background(), func(ctx context.Context, todo []string) ([]string, func()) {
				got = todo
				if tt.lose {
					c.MarkLost(nil, nil)
				}
				if !tt.fail {
					return nil, func() { locked = true }
				}
				return todo, nil
			})
			if len(got) != 2 {
				t.Errorf("settled %q, want the orphan and the expired grant", got)
			}
			if _, ok := c.Kept("new", rec{}.is("o", 2)); !ok && !tt.lose {
				t.Error("the live grant was swept")
			}
			if c.Orphans() != tt.wantQueued || locked == tt.fail {
				t.Errorf("queued %d, locked ran %v; want %d, %v", c.Orphans(), locked, tt.wantQueued, !tt.fail)
			}
		})
	}
}

func TestIdleOut(t *testing.T) {
	tests := []struct {
		name string
		idle time.Duration
		prep func(c *testCore)
		want bool
	}{
		{"idle at once", -1, func(*testCore) {}, true},
		{"idle, timeout not reached", time.Hour, func(*testCore) {}, false},
		{"a reference", -1, func(c *testCore) { c.Hold() }, false},
		{"a grant", -1, func(c *testCore) { c.Track("a", rec{}, time.Now()) }, false},
		{"an orphan", -1, func(c *testCore) { c.AddOrphan("a") }, false},
		{"an acquire", -1, func(c *testCore) { c.Begin("a") }, false},
		{"an acquire ended", -1, func(c *testCore) { c.Begin("a"); c.End("a") }, true},
		{"gone", -1, func(c *testCore) { c.Retire() }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCore(tt.idle)
			c.Started(time.Now().Add(time.Hour))
			c.Drop() // the creator's
			tt.prep(c)
			forgot := c.forgot
			if got := c.IdleOut(); got != tt.want {
				t.Errorf("IdleOut = %v, want %v", got, tt.want)
			}
			if tt.want && (c.forgot != forgot+1 || c.Hold()) {
				t.Error("an idled-out session is not forgotten and gone")
			}
		})
	}
}

func TestPlan(t *testing.T) {
	now := time.Now()
	retry := 250 * time.Millisecond
	tests := []struct {
		name     string
		idle     time.Duration
		prep     func(c *testCore)
		fail     bool
		wantNext time.Time
		wantIdle bool
	}{
		{"nothing due: the check period", time.Hour, func(c *testCore) { c.Hold() }, false, now.Add(time.Minute), false},
		{"a grant's deadline", time.Hour, func(c *testCore) { c.Track("a", rec{}, now.Add(-500*time.Millisecond)) }, false, now.Add(500 * time.Millisecond), false},
		{"expired at its deadline, retried", time.Hour, func(c *testCore) { c.Track("a", rec{}, now.Add(-time.Second)) }, true, now.Add(retry), false},
		{"idle at once", -1, func(*testCore) {}, false, now.Add(time.Minute), true},
		{"idle timeout ahead", 10 * time.Second, func(c *testCore) {
			c.Mu.Lock()
			c.lastUse = now
			c.Mu.Unlock()
		}, false, now.Add(10 * time.Second), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCore(tt.idle)
			c.Drop() // the creator's
			tt.prep(c)
			next, idle := c.Plan(now, func(todo []string) []string {
				if tt.fail {
					return todo
				}
				return nil
			}, time.Minute, retry)
			if !next.Equal(tt.wantNext) || idle != tt.wantIdle {
				t.Errorf("Plan = %s, %v; want %s, %v", next.Sub(now), idle, tt.wantNext.Sub(now), tt.wantIdle)
			}
		})
	}
}

func TestOnSession(t *testing.T) {
	errGone, errLost, errOther := errors.New("gone"), errors.New("lost"), errors.New("other")
	tests := []struct {
		name      string
		results   []error
		wantErr   error
		wantCalls int
	}{
		{"ok", []error{nil}, nil, 1},
		{"gone once: retried", []error{errGone, nil}, nil, 2},
		{"gone twice: lost", []error{errGone, errGone}, errLost, 2},
		{"other error: not retried", []error{errOther}, errOther, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var made atomic.Int32
			p := newPool(ok, &made)
			calls := 0
			_, err := OnSession(context.Background(), p, time.Second, func(f *fake) (int, error) {
				err := tt.results[calls]
				calls++
				if err == errGone {
					f.retire()
				}
				return calls, err
			}, errGone, func(error) error { return errLost }, nil)
			if err != tt.wantErr || calls != tt.wantCalls {
				t.Errorf("OnSession: %v after %d calls, want %v after %d", err, calls, tt.wantErr, tt.wantCalls)
			}
			for _, f := range p.All() {
				if n := f.refCount(); n != 0 {
					t.Errorf("a session kept %d references", n)
				}
			}
		})
	}
	var made atomic.Int32
	p := newPool(ok, &made)
	p.Close()
	_, err := OnSession(context.Background(), p, time.Second, func(*fake) (int, error) { return 0, nil },
		errGone, nil, func(err error) error { return errors.Join(errOther, err) })
	if !errors.Is(err, errOther) || !errors.Is(err, errClosed) {
		t.Errorf("OnSession on a closed pool: %v, want Use's error through useErr", err)
	}
}

func TestEnter(t *testing.T) {
	var made atomic.Int32
	p := newPool(ok, &made)
	errBad := errors.New("bad key")
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Enter(canceled, "renew", errBad); err != errBad {
		t.Errorf("Enter: %v, want the argument's error first", err)
	}
	if err := p.Enter(canceled, "renew", nil); err != context.Canceled {
		t.Errorf("Enter: %v, want the context's error next", err)
	}
	if err := p.Enter(context.Background(), "renew", nil); err != nil {
		t.Errorf("Enter on an open pool: %v", err)
	}
	p.Close()
	if err := p.Enter(context.Background(), "renew", nil); err != errClosed {
		t.Errorf("Enter on a closed pool: %v, want the closed error", err)
	}
}

// TestWatch: a watch's goroutine signals when it ends, stop waits for it,
// Shut ends it and waits for it, and a closed store refuses new watches.
func TestWatch(t *testing.T) {
	var made atomic.Int32
	p := newPool(ok, &made)
	wctx, cancel, err := p.WatchContext(context.Background(), "watch")
	if err != nil {
		t.Fatal(err)
	}
	ended := false
	ch, stop := p.Follow(cancel, func(chan struct{}) {
		<-wctx.Done()
		ended = true
	})
	if !p.Shut(func(*fake) {}) {
		t.Fatal("Shut did not close the pool")
	}
	if !ended {
		t.Error("Shut returned before the watch goroutine ended")
	}
	<-ch // the end's signal
	stop()
	stop()
	if _, _, err := p.WatchContext(context.Background(), "watch"); err != errClosed {
		t.Errorf("WatchContext on a closed pool: %v, want the closed error", err)
	}
	if p.Shut(func(*fake) {}) {
		t.Error("a second Shut reported it closed the pool")
	}
}
