package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"sync"
)

// Fault points, armed by the driver (one line "arm POINT" on the worker's
// standard input) and fired once, by the next message that reaches them:
//
//	hold-work  the lease is held and the work is about to start: the worker
//	           prints "held hold-work ..." and blocks, for the driver to SIGKILL it
//	           mid-message (its lease and its claimed row are left to expire)
//	hold-ack   the outcome is known (the effect may be committed) and the row
//	           is not yet acked: "held hold-ack ...", then the driver SIGKILLs it
//	stall      the lease's Checkpoint has passed and the fenced write is next:
//	           the worker prints "stall ..." and waits for a line "go"; the
//	           driver SIGSTOPs it, sends "go", waits until another worker has
//	           taken the message over, and SIGCONTs it, so that its write arrives
//	           with a token older than the new holder's
const (
	pointHoldWork = "hold-work"
	pointHoldAck  = "hold-ack"
	pointStall    = "stall"
)

// hooks are a worker's fault points and its event lines on standard output
// (one line per event, fields separated by spaces, the kind first).
type hooks struct {
	mu    sync.Mutex
	out   io.Writer
	armed map[string]bool
	goOn  chan struct{}   // a "go" line
	quit  <-chan struct{} // the worker is stopping
}

func newHooks(out io.Writer, quit <-chan struct{}) *hooks {
	return &hooks{out: out, armed: map[string]bool{}, goOn: make(chan struct{}, 16), quit: quit}
}

// emit prints one event line.
func (h *hooks) emit(kind string, d delivery, token uint64, detail ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	line := fmt.Sprintf("%s %s %d %d", kind, d.MsgID, d.Row, token)
	if len(detail) > 0 {
		line += " " + strings.Join(detail, " ")
	}
	fmt.Fprintln(h.out, line)
}

// readControl reads the driver's lines until r ends, then calls done (the
// driver has gone: the worker stops).
func (h *hooks) readControl(r io.Reader, done func()) {
	defer done()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2 && f[0] == "arm":
			h.mu.Lock()
			h.armed[f[1]] = true
			h.mu.Unlock()
		case len(f) == 1 && f[0] == "go":
			h.goOn <- struct{}{}
		}
	}
}

// fire disarms point and reports whether it was armed.
func (h *hooks) fire(point string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.armed[point] {
		return false
	}
	delete(h.armed, point)
	return true
}

// hold blocks at point, if it is armed, until the worker stops (the driver
// kills it first).
func (h *hooks) hold(point string, d delivery, token uint64) {
	if h.fire(point) {
		h.emit("held", d, token, point)
		<-h.quit
	}
}

// stall blocks before the fenced write, if armed, until a "go" line or
// the worker stops. It does not watch the lease: a holder stopped here
// wakes up and writes with the token it had, which only the fence can
// refuse.
func (h *hooks) stall(d delivery, token uint64) {
	if h.fire(pointStall) {
		h.emit("stall", d, token)
		select {
		case <-h.goOn:
		case <-h.quit:
		}
	}
}
