package postgres

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Wake-ups on release. One connection per store LISTENs on the table's
// channel, and a release NOTIFYs the key as payload in its own statement.
// NOTIFY is not free: it gives the transaction an id and a commit record,
// and committing transactions that notify are serialised server-wide. So a
// release notifies only when someone waits for the key, which it learns
// from the lock manager, without touching a table: every listening
// connection holds a shared advisory lock on the key's waiter flag (the
// two-int4 form of the key's lock id, a key space apart from the bigint
// advisory locks) while it has subscribers for the key, and a release tries
// an exclusive transaction-level lock on that flag. If the try fails,
// somebody waits: notify. Subscribe takes the shared lock before it returns,
// and a waiter subscribes before it tries to acquire, so a release that
// could have let it in always sees its flag. A notification can still be
// lost while the listening connection is down, which is why the client
// keeps backing off too; when the connection comes back every subscriber is
// woken once.
const (
	listenWait     = 10 * time.Second // how long Subscribe waits for LISTEN
	listenRetryMin = 100 * time.Millisecond
	listenRetryMax = 5 * time.Second
)

// A flagOp asks the listening loop to take (lock) or drop the shared lock
// on a key's waiter flag. done, if set, receives the outcome.
type flagOp struct {
	key  string
	lock bool
	done chan error
}

// listener is a store's notifier: its subscribers by key, and the
// listening loop (listen.go) that serves them.
type listener struct {
	c *core

	mu      sync.Mutex
	subs    map[string]map[chan struct{}]struct{}
	flagged map[string]bool // keys whose flag the current connection holds
	ops     []flagOp
	running bool
	closed  bool
	ready   bool          // LISTEN is active
	lastErr error         // why the last connection attempt or connection failed
	results int           // connection attempts that ended (ready or failed)
	changed chan struct{} // closed and replaced when ready or lastErr change
	kick    chan struct{} // cuts the loop's retry backoff short
	poke    chan struct{} // interrupts the loop's wait: ops are queued
	cancel  context.CancelFunc
	done    chan struct{}
}

func newListener(c *core) *listener {
	return &listener{
		c:       c,
		subs:    make(map[string]map[chan struct{}]struct{}),
		flagged: make(map[string]bool),
		changed: make(chan struct{}),
		kick:    make(chan struct{}, 1),
		poke:    make(chan struct{}, 1),
	}
}

// subscribe is the stores' Subscribe: it waits for the listening connection
// and raises key's waiter flag before it returns.
func (l *listener) subscribe(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	ch := make(chan struct{}, 1)
	if err := l.waitReady(ctx); err != nil {
		if errors.Is(err, errNoWait) {
			// No LISTEN with this driver: a channel that never fires
			// leaves the waiter to its backoff.
			return ch, func() {}, nil
		}
		return nil, nil, err
	}
	l.mu.Lock()
	if l.subs[key] == nil {
		l.subs[key] = make(map[chan struct{}]struct{})
	}
	l.subs[key][ch] = struct{}{}
	var done chan error
	if !l.flagged[key] {
		done = make(chan error, 1)
		l.enqueue(flagOp{key: key, lock: true, done: done})
	}
	l.mu.Unlock()
	var once sync.Once
	unsub := func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			delete(l.subs[key], ch)
			if len(l.subs[key]) == 0 {
				delete(l.subs, key)
				if l.flagged[key] {
					l.enqueue(flagOp{key: key})
				}
			}
		})
	}
	if done != nil {
		// The flag must be up before the caller's next acquire attempt.
		var err error
		select {
		case err = <-done:
		case <-ctx.Done():
			err = ctx.Err()
		}
		if err != nil {
			unsub()
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			return nil, nil, l.c.fail(ctx, "subscribe", err)
		}
	}
	return ch, unsub, nil
}

// enqueue queues op for the listening loop. Called with mu held.
func (l *listener) enqueue(op flagOp) {
	l.ops = append(l.ops, op)
	select {
	case l.poke <- struct{}{}:
	default:
	}
}

// close stops the listening loop and waits for it.
func (l *listener) close() {
	l.mu.Lock()
	l.closed = true
	cancel, done := l.cancel, l.done
	l.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}
