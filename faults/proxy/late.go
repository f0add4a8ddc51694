package proxy

import (
	"math"
	"time"

	"github.com/leasehold-go/leasehold/faults/history"
)

// The late clean-up fault (F5c): a lost reply, then held requests.

// lateFault is the state of LoseReplyDelayRequests.
type lateFault struct {
	match   func(chunk []byte) bool // the reply to drop; nil when not armed
	hold    func(chunk []byte) bool // the requests to hold back; nil: all
	delay   time.Duration
	window  time.Duration
	release chan struct{} // closed by ReleaseDelayed
	start   int64         // the window starts (Mono; 0: at the drop)
	st      LateStats
}

// LateStats is what LoseReplyDelayRequests did, in Mono nanoseconds (0:
// not yet).
type LateStats struct {
	Dropped   int64 // the chosen reply was dropped
	Held      int   // request chunks delayed
	Delivered int64 // the last delayed chunk reached the store
	// Request is the last request chunk the dropped reply's connection
	// sent before the reply: the request whose answer was lost.
	Request []byte
}

// LoseReplyDelayRequests arms the late clean-up fault: the next reply
// chunk for which match is true is dropped and its connection reset (its
// request went through), and every request chunk read in the window after
// that, on any connection, for which hold is true (nil: every chunk) is
// held back until ReleaseDelayed, or at most delay (each connection keeps
// its order, so what it sends later waits behind). Connections that send
// nothing held in the window are not slowed.
func (p *Proxy) LoseReplyDelayRequests(match, hold func(chunk []byte) bool, delay, window time.Duration) {
	p.mu.Lock()
	p.late = lateFault{match: match, hold: hold, delay: delay, window: window, release: make(chan struct{})}
	p.mu.Unlock()
}

// HoldRequests holds back, from now until ReleaseDelayed (or at most
// delay each), every request chunk for which hold is true, on any
// connection; like LoseReplyDelayRequests without the lost reply (and
// replacing it). The late clean-up fault keeps the other holders off the
// lost grant's key with it.
func (p *Proxy) HoldRequests(hold func(chunk []byte) bool, delay time.Duration) {
	p.mu.Lock()
	p.late = lateFault{hold: hold, delay: delay, window: time.Duration(math.MaxInt64), release: make(chan struct{}), start: history.Mono()}
	p.mu.Unlock()
}

// ReleaseDelayed lets the requests held back by LoseReplyDelayRequests
// through now.
func (p *Proxy) ReleaseDelayed() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r := p.late.release; r != nil {
		select {
		case <-r:
		default:
			close(r)
		}
	}
}

// LateStats reports what the late clean-up fault did since it was armed.
func (p *Proxy) LateStats() LateStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.late.st
}

// lateReply reports whether reply chunk b is the one to drop (and records
// the drop).
func (p *Proxy) lateReply(pc *proxyConn, b []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.late.match == nil || !p.late.match(b) {
		return false
	}
	p.late.match = nil
	p.late.st.Dropped = history.Mono()
	p.late.start = p.late.st.Dropped
	p.late.st.Request = pc.lastRequest()
	return true
}

// lateDelay is the longest delay of request chunk b read now (0: none),
// and the channel whose closing ends it sooner.
func (p *Proxy) lateDelay(b []byte) (time.Duration, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := &p.late
	if f.start == 0 || history.Mono()-f.start > int64(f.window) || f.hold != nil && !f.hold(b) {
		return 0, nil
	}
	f.st.Held++
	return f.delay, f.release
}

func (p *Proxy) lateDelivered() {
	p.mu.Lock()
	p.late.st.Delivered = history.Mono()
	p.mu.Unlock()
}
