package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// watchdogCommand is the hidden subcommand that runs the watchdog.
const watchdogCommand = "__watchdog"

// The watchdog is a second leasehold process that run starts before the
// command, in a process group of its own that ignores the signals a
// terminal or a supervisor sends to leasehold's group. It enforces the
// holder's deadline on the command's process group even when leasehold
// cannot: stopped (SIGSTOP), starved, or dead. run writes to its stdin, one
// line each, with times on watchdogNow's clock:
//
//	guard PGID DEADLINE   the command's group and the holder's deadline
//	deadline DEADLINE     a renewal moved the deadline later
//	done                  the command has exited; stand down
//
// At DEADLINE - grace the watchdog sends SIGTERM to the group, at DEADLINE
// SIGKILL, unless a later deadline came first. When its stdin closes
// without "done" (leasehold died), it sends SIGKILL at once. It reports what
// it did on its stdout ("term", "kill") for run to tell the user.

// watchdog is run's end of the watchdog.
type watchdog struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	events chan string // the watchdog's reports; closed when it exits
}

// startWatchdog starts the watchdog process.
func startWatchdog(grace time.Duration, stderr io.Writer) (*watchdog, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find leasehold's own executable to start its watchdog: %w", err)
	}
	cmd := exec.Command(exe, watchdogCommand, strconv.FormatInt(int64(grace), 10))
	cmd.Stderr = stderr
	cmd.SysProcAttr = ownGroup()
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start leasehold's watchdog: %w", err)
	}
	w := &watchdog{cmd: cmd, in: in, events: make(chan string, 4)}
	go func() {
		defer close(w.events)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			w.events <- sc.Text()
		}
	}()
	return w, nil
}

// send writes one line to the watchdog. A watchdog that is gone already
// did what it was there for, or was killed; run goes on guarding alone.
func (w *watchdog) send(format string, args ...any) {
	_, _ = fmt.Fprintf(w.in, format+"\n", args...)
}

// watchdogTime converts a deadline to the watchdog's clock.
func watchdogTime(t time.Time) int64 {
	return watchdogNow() + int64(time.Until(t))
}

// guard hands the command's process group and deadline to the watchdog.
func (w *watchdog) guard(pgid int, deadline time.Time) {
	w.send("guard %d %d", pgid, watchdogTime(deadline))
}

// extend moves the deadline later.
func (w *watchdog) extend(deadline time.Time) {
	w.send("deadline %d", watchdogTime(deadline))
}

// done stands the watchdog down and waits for it to exit. Call it before
// reaping the command, so that the group id the watchdog knows cannot have
// been reused. It returns what the watchdog reported that run had not taken
// in yet: that it began termination (stopped) or killed the group.
func (w *watchdog) done() (stopped, killed bool) {
	w.send("done")
	w.in.Close()
	for w.events != nil {
		e, ok := <-w.events
		if !ok {
			break
		}
		stopped = stopped || e == "term" || e == "kill"
		killed = killed || e == "kill"
	}
	_ = w.cmd.Wait()
	return stopped, killed
}

// watchdogMain is the watchdog process: leasehold __watchdog GRACE_NS.
func watchdogMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// SIGPIPE too: a write to leasehold after it died must fail with EPIPE,
	// not kill the watchdog before it has killed the command's group.
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE)
	ignoreTerminalStops()
	if len(args) != 1 {
		fmt.Fprintf(stderr, "leasehold %s is run by leasehold run, not by hand\n", watchdogCommand)
		return exitUsage
	}
	grace, err := strconv.ParseInt(args[0], 10, 64)
	if err != nil || grace < 0 {
		fmt.Fprintf(stderr, "leasehold %s: bad grace %q\n", watchdogCommand, args[0])
		return exitUsage
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdin)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	g := guardState{grace: grace, stdout: stdout, stderr: stderr}
	for {
		wait := g.next()
		t := time.NewTimer(wait)
		select {
		case line, ok := <-lines:
			t.Stop()
			if !ok {
				g.parentGone()
				return exitOK
			}
			if g.apply(line) {
				return exitOK
			}
		case <-t.C:
			if g.tick() {
				return exitOK
			}
		}
	}
}

// watchdogPoll bounds the watchdog's sleeps: Go's timers do not count time
// the host spends suspended, so it re-reads watchdogNow at least this often.
const watchdogPoll = 100 * time.Millisecond

// guardState is the watchdog's view of the command's group.
type guardState struct {
	grace          int64
	pgid           int
	deadline       int64 // on watchdogNow's clock
	terminating    bool
	stdout, stderr io.Writer
	kill           func(pgid int, s syscall.Signal) // nil: killGroup (tests record instead)
}

// signal sends s to the command's group.
func (g *guardState) signal(s syscall.Signal) {
	if g.kill != nil {
		g.kill(g.pgid, s)
		return
	}
	killGroup(g.pgid, s)
}

// next is how long to sleep before the next look at the clock.
func (g *guardState) next() time.Duration {
	if g.pgid == 0 {
		return watchdogPoll
	}
	at := g.deadline
	if !g.terminating {
		at = g.termAt()
	}
	return min(max(time.Duration(at-watchdogNow()), 0), watchdogPoll)
}

// termAt is when SIGTERM is due: grace before the deadline, or at once
// when that would fall below the clock's range.
func (g *guardState) termAt() int64 {
	if g.deadline < math.MinInt64+g.grace {
		return math.MinInt64
	}
	return g.deadline - g.grace
}

// apply handles one line from run; it returns true when the watchdog is done.
func (g *guardState) apply(line string) bool {
	f := strings.Fields(line)
	switch {
	case len(f) == 1 && f[0] == "done":
		return true
	case len(f) == 3 && f[0] == "guard":
		pgid, err1 := strconv.Atoi(f[1])
		d, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 == nil && err2 == nil && pgid > 1 { // kill(-1) would signal every process
			g.pgid, g.deadline = pgid, d
		}
	case len(f) == 2 && f[0] == "deadline":
		// Once termination has begun it runs its course.
		if d, err := strconv.ParseInt(f[1], 10, 64); err == nil && d > g.deadline && !g.terminating {
			g.deadline = d
		}
	}
	return g.tick()
}

// tick acts on the clock; it returns true once the group has been killed.
func (g *guardState) tick() bool {
	if g.pgid == 0 {
		return false
	}
	now := watchdogNow()
	if !g.terminating && now >= g.termAt() {
		g.terminating = true
		g.signal(syscall.SIGTERM)
		fmt.Fprintln(g.stdout, "term")
	}
	if now >= g.deadline {
		g.signal(syscall.SIGKILL)
		fmt.Fprintln(g.stdout, "kill")
		fmt.Fprintf(g.stderr, "leasehold run: watchdog: leasehold did not extend the lease by the holder's deadline; sent SIGKILL to the command's process group %d\n", g.pgid)
		return true
	}
	return false
}

// parentGone handles the end of stdin without "done": leasehold died, and
// nothing renews the lease any more.
func (g *guardState) parentGone() {
	if g.pgid == 0 {
		return
	}
	g.signal(syscall.SIGKILL)
	fmt.Fprintf(g.stderr, "leasehold run: watchdog: leasehold exited while the command ran; sent SIGKILL to the command's process group %d\n", g.pgid)
}

// standDown stands the watchdog down once the command has exited, and takes
// in what it reported that the guard had not heard yet.
func (g *guard) standDown() {
	if stopped, killed := g.wd.done(); stopped {
		g.watchdogStopped(killed)
	}
}

// watchdogHeard bounds how long the guard, finding the deadline already
// passed (leasehold was stopped or starved past it), waits for the
// watchdog's report: the watchdog acts at the deadline, and its report,
// written meanwhile, is on its way. Not a timing assumption about the
// watchdog: without a report the guard stops the command itself.
const watchdogHeard = time.Second

// awaitWatchdog, when left (the time to the deadline) is not positive,
// kills the group at once: past the deadline the store's expiry is at most
// the drift margin away, and the command must not outlive it, whatever the
// watchdog did. Only then does it wait up to watchdogHeard for the
// watchdog's report, so that run says what happened (the watchdog stopped
// the command) rather than "stopping the command".
func (g *guard) awaitWatchdog(left time.Duration) {
	if left > 0 || g.stopping {
		return
	}
	g.c.signal(syscall.SIGKILL) // first: the message may wait, the kill may not
	g.hearWatchdog(watchdogHeard)
	if !g.stopping {
		g.stopping = true
		g.killAt = g.deadline
		fmt.Fprintf(g.a.stderr, "leasehold %s: the lease's deadline passed while leasehold was stopped or starved; sent SIGKILL to the command's process group\n", g.f.name)
	}
	g.killed = true // by the SIGKILL above
}

// hearWatchdog takes in the watchdog's reports until one says it stopped
// the command, its pipe closes, or wait passes.
func (g *guard) hearWatchdog(wait time.Duration) {
	t := time.NewTimer(wait)
	defer t.Stop()
	for !g.stopping && g.wd.events != nil {
		select {
		case e, ok := <-g.wd.events:
			g.hear(e, ok)
		case <-t.C:
			return
		}
	}
}
