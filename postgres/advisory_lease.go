package postgres

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// advLease is an AdvisoryStore's state for one grant (Grant.Private): the
// session that holds the lock, and the watcher that notices when that
// session's connection breaks.
type advLease struct {
	s          *AdvisoryStore
	key, owner string
	label      string // as published
	token      uint64
	lockID     int64
	check      string
	prevApp    string // the session's settings before the lease, restored on release
	prevIdle   string

	lost     chan struct{}
	lostOnce sync.Once
	broken   atomic.Bool // the watcher saw the connection fail

	mu          sync.Mutex // serialises use of sess
	sess        session    // nil once released or lost
	watchGen    uint64     // bumped by stopWatch: a pending start is void
	watchCancel context.CancelFunc
	watchDone   chan struct{}
}

// watchDelay is how long a session stays idle before the watcher starts
// reading it. A lease released sooner (a short critical section) never
// pays for a watcher; one that lives longer has it from then on.
const watchDelay = 20 * time.Millisecond

func (l *advLease) markLost() { l.lostOnce.Do(func() { close(l.lost) }) }

// startWatch arranges for the idle session to be watched from watchDelay on,
// until stopWatch: when the connection breaks (the server restarted, ended
// the session at its idle_session_timeout, or the network failed) the lock
// is gone, so Lost is closed at once instead of at the next renewal. The
// store's watchQueue starts the watcher. Called with mu held.
func (l *advLease) startWatch() {
	l.s.watches.add(watchStart{l: l, gen: l.watchGen, due: time.Now().Add(watchDelay)})
}

// beginWatchIf starts the watcher unless a stopWatch came after the
// startWatch that asked for it (gen), or the session is gone.
func (l *advLease) beginWatchIf(gen uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.watchGen == gen && l.sess != nil && l.watchCancel == nil {
		l.beginWatch()
	}
}

// beginWatch starts the watcher. Called with mu held.
func (l *advLease) beginWatch() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	l.watchCancel, l.watchDone = cancel, done
	sess := l.sess
	go func() {
		defer close(done)
		err := sess.wait(ctx)
		if err == nil || errors.Is(err, errNoWait) {
			return
		}
		l.broken.Store(true)
		l.markLost()
		// Give the connection back now unless an operation is about to
		// use it (it will see broken and do so itself).
		if l.mu.TryLock() {
			if l.sess == sess {
				cancel()
				l.watchCancel, l.watchDone = nil, nil
				l.closeSession(true)
			}
			l.mu.Unlock()
		}
	}()
}

// stopWatch stops the watcher and waits for it. Called with mu held.
func (l *advLease) stopWatch() {
	l.watchGen++
	if l.watchCancel != nil {
		l.watchCancel()
		<-l.watchDone
		l.watchCancel, l.watchDone = nil, nil
	}
}

// closeSession gives the session back (or discards it) and forgets the
// lease. Called with mu held and the watcher stopped.
func (l *advLease) closeSession(broken bool) {
	if l.sess == nil {
		return
	}
	l.sess.close(broken)
	l.sess = nil
	l.s.forget(l)
}

// abandon ends the lease's session on AdvisoryStore.Close.
func (l *advLease) abandon() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sess == nil {
		return
	}
	l.stopWatch()
	l.closeSession(true)
	l.markLost()
}
