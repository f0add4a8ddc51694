package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/leasehold-go/leasehold"
)

// guard enforces the rule of run: the command's process group is dead by
// the holder's deadline, which comes before the store can grant the key to
// anyone else. When the time left falls to --grace and no renewal has moved
// the deadline, it sends SIGTERM; at the deadline, SIGKILL. The watchdog
// does the same from outside, for when leasehold itself cannot.
type guard struct {
	a  *app
	f  runFlags
	l  *leasehold.Lease
	c  *child
	wd *watchdog

	deadline time.Time // the holder's deadline, as the watchdog knows it
	stopping bool      // SIGTERM has gone out; it is final
	killAt   time.Time // when stopping: when SIGKILL goes out
	killed   bool
	lostSaid bool // the loss of the lease has been reported
}

// pollPeriod is how often the guard looks for a renewal that moved the
// deadline, to pass it on to the watchdog well before it acts.
func pollPeriod(ttl time.Duration) time.Duration {
	return min(max(ttl/50, 10*time.Millisecond), 200*time.Millisecond)
}

// loop supervises until the command exits.
func (g *guard) loop(sigs <-chan os.Signal) {
	lost := g.l.Done()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-g.c.exited:
			return
		case s := <-sigs:
			g.c.signal(s.(syscall.Signal))
		case <-g.c.stopped:
			g.c.suspend()
		case <-lost:
			lost = nil
			g.lostSaid = true
			if g.stopping {
				fmt.Fprintf(g.a.stderr, "leasehold %s: %s\n", g.f.name, message(g.l.Err()))
				break
			}
			// Refused, or the deadline passed: SIGKILL by the deadline
			// at the latest, even if that cuts the grace short.
			g.stop(fmt.Sprintf("%s; stopping the command", message(g.l.Err())), min(time.Until(g.deadline), g.f.grace))
		case e, ok := <-g.wd.events:
			g.hear(e, ok)
		case <-t.C:
		}
		g.tick()
		t.Reset(g.next())
	}
}

// drain takes in the watchdog's reports that are waiting, so that leasehold,
// continued after a stop, knows what the watchdog did meanwhile.
func (g *guard) drain() {
	for g.wd.events != nil {
		select {
		case e, ok := <-g.wd.events:
			g.hear(e, ok)
		default:
			return
		}
	}
}

// hear takes in one report e from the watchdog; !ok: its pipe closed.
func (g *guard) hear(e string, ok bool) {
	switch {
	case !ok:
		g.wd.events = nil
	case e == "term" || e == "kill":
		g.watchdogStopped(e == "kill")
	}
}

// settle runs once the command has exited: it takes in the watchdog's last
// reports and says that the lease was lost, if it was and that was not said.
func (g *guard) settle() {
	g.drain()
	if !time.Now().Before(g.l.Deadline()) {
		// The deadline has passed (leasehold was stopped past it, say), so
		// the client is ending the lease; its scheduler may not have run
		// yet after a SIGCONT. Take in the loss it is about to report.
		select {
		case <-g.l.Done():
		case <-time.After(time.Second):
		}
	}
	if err := g.l.Err(); errors.Is(err, leasehold.ErrLost) && !g.lostSaid {
		g.lostSaid = true
		fmt.Fprintf(g.a.stderr, "leasehold %s: %s\n", g.f.name, message(err))
	}
}

// watchdogStopped takes in that the watchdog began termination (SIGTERM),
// or killed the group, because leasehold had not extended the deadline.
func (g *guard) watchdogStopped(killed bool) {
	if !g.stopping {
		g.stopping = true
		g.killAt = g.deadline
		fmt.Fprintf(g.a.stderr, "leasehold %s: the watchdog began stopping the command: leasehold did not extend the lease in time (it was stopped or starved)\n", g.f.name)
	}
	g.killed = g.killed || killed
}

// tick passes a renewal on to the watchdog and acts on the clock.
func (g *guard) tick() {
	g.drain()
	if !g.stopping {
		if d := g.l.Deadline(); d.After(g.deadline) && g.l.Err() == nil {
			g.deadline = d
			g.wd.extend(d)
		}
		if left := time.Until(g.deadline); left <= g.f.grace {
			g.awaitWatchdog(left) // past the deadline, it has acted: hear it first
			g.stop(fmt.Sprintf("the lease on %q has %s left and no renewal has extended it; stopping the command", g.l.Key(), roundDuration(max(left, 0))), left)
		}
	}
	if g.stopping && !g.killed && !time.Now().Before(g.killAt) {
		g.killed = true
		// Signal first: a stalled stderr must not delay the kill.
		g.c.signal(syscall.SIGKILL)
		fmt.Fprintf(g.a.stderr, "leasehold %s: the command outlived the grace period; sent SIGKILL to its process group\n", g.f.name)
	}
}

// stop begins termination: SIGTERM now, SIGKILL after grace.
func (g *guard) stop(why string, grace time.Duration) {
	if g.stopping {
		return
	}
	g.stopping = true
	grace = max(grace, 0)
	g.killAt = time.Now().Add(grace)
	g.c.signal(syscall.SIGTERM) // before the message, which may block
	fmt.Fprintf(g.a.stderr, "leasehold %s: %s (SIGTERM, then SIGKILL after %s)\n", g.f.name, why, roundDuration(grace))
}

// next is how long until the guard must look again.
func (g *guard) next() time.Duration {
	if g.stopping {
		if g.killed {
			return time.Hour
		}
		return max(time.Until(g.killAt), 0)
	}
	return max(min(time.Until(g.deadline.Add(-g.f.grace)), pollPeriod(g.f.ttl)), 0)
}
