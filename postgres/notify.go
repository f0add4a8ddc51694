package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold-go/leasehold"
)

// Wake-ups on release. One connection per Store LISTENs on the table's
// channel; a release NOTIFYs the key as payload in its own statement. NOTIFY
// is not free (committing transactions that notify are serialised
// server-wide), so a release notifies only when a waiter has marked the key
// in the waiters table in the last two minutes. Subscribe writes that mark
// (at most every 30 seconds per key and process) after its LISTEN is active,
// so a release that commits after Subscribe returns is never missed. A
// notification can still be lost (the listening connection breaks, or a
// release whose statement began before the mark committed), which is why the
// client keeps backing off too; when the listening connection comes back
// every subscriber is woken once.
const (
	markRefresh    = 30 * time.Second // the SQL's mark lasts 2 minutes
	listenWait     = 10 * time.Second // how long Subscribe waits for LISTEN
	listenRetryMin = 100 * time.Millisecond
	listenRetryMax = 5 * time.Second
)

type listener struct {
	s *Store

	mu      sync.Mutex
	subs    map[string]map[chan struct{}]struct{}
	marks   map[string]time.Time
	running bool
	closed  bool
	ready   bool          // LISTEN is active
	lastErr error         // why the last connection attempt or connection failed
	results int           // connection attempts that ended (ready or failed)
	changed chan struct{} // closed and replaced when ready or lastErr change
	kick    chan struct{} // cuts the loop's retry backoff short
	cancel  context.CancelFunc
	done    chan struct{}
}

func newListener(s *Store) *listener {
	return &listener{
		s:       s,
		subs:    make(map[string]map[chan struct{}]struct{}),
		marks:   make(map[string]time.Time),
		changed: make(chan struct{}),
		kick:    make(chan struct{}, 1),
	}
}

// Subscribe returns a channel that receives a value (coalesced) when key may
// have become free: released by its holder, or the listening connection was
// re-established. Expiry sends nothing. It fails when the server cannot be
// reached. With a database/sql driver other than pgx's stdlib, which cannot
// LISTEN, the channel never fires and waiters rely on their backoff; so do
// they, silently, through PgBouncer in transaction pooling mode unless
// Options.ListenConnString names a direct connection.
func (s *Store) Subscribe(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	if err := s.check(ctx, "subscribe"); err != nil {
		return nil, nil, err
	}
	return s.lis.subscribe(ctx, key)
}

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
	needMark := time.Since(l.marks[key]) > markRefresh
	l.mu.Unlock()
	var once sync.Once
	unsub := func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			delete(l.subs[key], ch)
			if len(l.subs[key]) == 0 {
				delete(l.subs, key)
			}
		})
	}
	if needMark {
		if _, err := l.s.q.exec(ctx, l.s.st.mark, key); err != nil {
			unsub()
			return nil, nil, l.s.fail(ctx, "subscribe", err)
		}
		l.mu.Lock()
		now := time.Now()
		l.marks[key] = now
		if len(l.marks) > 1024 {
			for k, t := range l.marks {
				if now.Sub(t) > markRefresh {
					delete(l.marks, k)
				}
			}
		}
		l.mu.Unlock()
	}
	return ch, unsub, nil
}

// waitReady starts the listening loop if needed and waits until LISTEN is
// active. When the last attempt failed it asks for an immediate retry and
// reports that retry's failure. It reports errNoWait when the driver cannot
// LISTEN at all.
func (l *listener) waitReady(ctx context.Context) error {
	timer := time.NewTimer(listenWait)
	defer timer.Stop()
	seen := -1
	for {
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			return &leasehold.StoreError{Store: l.s.name, Op: "subscribe", Err: leasehold.ErrClosed}
		}
		if !l.running {
			l.running = true
			lctx, cancel := context.WithCancel(context.Background())
			l.cancel, l.done = cancel, make(chan struct{})
			go l.run(lctx)
		}
		ready, lastErr, results, changed := l.ready, l.lastErr, l.results, l.changed
		l.mu.Unlock()
		switch {
		case ready:
			return nil
		case errors.Is(lastErr, errNoWait):
			return errNoWait
		case lastErr != nil && seen >= 0 && results > seen:
			return l.s.fail(ctx, "subscribe", fmt.Errorf("cannot LISTEN: %w", lastErr))
		case lastErr != nil && seen < 0:
			seen = results
			select {
			case l.kick <- struct{}{}:
			default:
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			return &leasehold.StoreError{Store: l.s.name, Op: "subscribe", Err: fmt.Errorf("%w: no listening connection after %s", ErrUnreachable, listenWait)}
		}
	}
}

// setState records the listening connection's state and wakes waitReady.
// Called with mu held.
func (l *listener) setState(ready bool, err error) {
	l.ready, l.lastErr = ready, err
	l.results++
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *listener) run(ctx context.Context) {
	defer close(l.done)
	backoff := listenRetryMin
	for {
		err := l.serve(ctx)
		if ctx.Err() != nil {
			return
		}
		l.mu.Lock()
		l.setState(false, err)
		l.mu.Unlock()
		if errors.Is(err, errNoWait) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-l.kick:
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, listenRetryMax)
	}
}

// serve LISTENs on one connection and dispatches notifications until the
// connection fails or ctx is done.
func (l *listener) serve(ctx context.Context) error {
	fn := func(c *pgx.Conn) error {
		if _, err := c.Exec(ctx, "LISTEN "+quoteIdent(l.s.channel)); err != nil {
			return err
		}
		l.mu.Lock()
		l.setState(true, nil)
		l.wakeAll() // a release may have been missed while we were down
		l.mu.Unlock()
		for {
			n, err := c.WaitForNotification(ctx)
			if err != nil {
				return err
			}
			l.mu.Lock()
			for ch := range l.subs[n.Payload] {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
			l.mu.Unlock()
		}
	}
	if cs := l.s.opts.ListenConnString; cs != "" {
		c, err := pgx.Connect(ctx, cs)
		if err != nil {
			return err
		}
		defer closeConn(c)
		return fn(c)
	}
	return l.s.q.listen(ctx, fn)
}

// wakeAll wakes every subscriber. Called with mu held.
func (l *listener) wakeAll() {
	for _, chs := range l.subs {
		for ch := range chs {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
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
