package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/leasehold-go/leasehold"
)

// Wake-ups on release. One connection per Store LISTENs on the table's
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

type listener struct {
	s *Store

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

func newListener(s *Store) *listener {
	return &listener{
		s:       s,
		subs:    make(map[string]map[chan struct{}]struct{}),
		flagged: make(map[string]bool),
		changed: make(chan struct{}),
		kick:    make(chan struct{}, 1),
		poke:    make(chan struct{}, 1),
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
			return nil, nil, l.s.fail(ctx, "subscribe", err)
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
		l.mu.Lock()
		// The connection is gone, and the flags with it. Queued lock
		// requests fail; the next connection raises the flags of every
		// key that still has subscribers.
		clear(l.flagged)
		for _, op := range l.ops {
			if op.done != nil {
				op.done <- fmt.Errorf("%w: the listening connection failed: %v", ErrUnreachable, err)
			}
		}
		l.ops = nil
		if ctx.Err() != nil {
			l.mu.Unlock()
			return
		}
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

// serve runs one listening connection until it fails or ctx is done.
func (l *listener) serve(ctx context.Context) error {
	if cs := l.s.opts.ListenConnString; cs != "" {
		c, err := pgx.Connect(ctx, cs)
		if err != nil {
			return err
		}
		defer closeConn(c)
		return l.serveConn(ctx, c)
	}
	return l.s.q.listen(ctx, func(c *pgx.Conn) error { return l.serveConn(ctx, c) })
}

func (l *listener) serveConn(ctx context.Context, c *pgx.Conn) error {
	if _, err := c.Exec(ctx, "LISTEN "+quoteIdent(l.s.channel)); err != nil {
		return err
	}
	l.mu.Lock()
	for key := range l.subs {
		l.ops = append(l.ops, flagOp{key: key, lock: true})
	}
	l.mu.Unlock()
	if err := l.runOps(ctx, c); err != nil {
		return err
	}
	l.mu.Lock()
	l.setState(true, nil)
	l.wakeAll() // a release may have been missed while we were down
	l.mu.Unlock()
	for {
		n, err := l.wait(ctx, c)
		if err != nil {
			return err
		}
		if n != nil {
			l.mu.Lock()
			for ch := range l.subs[n.Payload] {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
			l.mu.Unlock()
		}
		if err := l.runOps(ctx, c); err != nil {
			return err
		}
	}
}

// runOps raises and lowers waiter flags as queued.
func (l *listener) runOps(ctx context.Context, c *pgx.Conn) error {
	for {
		l.mu.Lock()
		if len(l.ops) == 0 {
			l.mu.Unlock()
			return nil
		}
		op := l.ops[0]
		l.ops = l.ops[1:]
		// Skip work that is moot by now: a flag already up or no longer
		// wanted, or one whose key has subscribers again.
		_, wanted := l.subs[op.key]
		skip := (op.lock && (l.flagged[op.key] || !wanted)) || (!op.lock && (wanted || !l.flagged[op.key]))
		l.mu.Unlock()
		var err error
		if !skip {
			var up bool
			up, err = l.setFlag(ctx, c, op)
			if err == nil && up == op.lock {
				l.mu.Lock()
				l.flagged[op.key] = op.lock
				if _, wanted := l.subs[op.key]; op.lock && !wanted {
					// Unsubscribed while the flag went up.
					l.ops = append(l.ops, flagOp{key: op.key})
				}
				l.mu.Unlock()
			}
		}
		if op.done != nil {
			op.done <- err
		}
		if err != nil {
			return err
		}
	}
}

// flagTries bounds the attempts to raise a flag that an exclusive holder
// keeps down: a release holds it for one statement, so a few tries
// suffice; anything else (another application using the same two-int4
// advisory key) would block Subscribe, so after that the flag stays down
// and the waiter relies on its backoff.
const flagTries = 50

// setFlag raises or lowers op.key's waiter flag on c and reports whether it
// is up afterwards.
func (l *listener) setFlag(ctx context.Context, c *pgx.Conn, op flagOp) (bool, error) {
	hi, lo := flagHalves(l.s.LockID(op.key))
	if !op.lock {
		_, err := c.Exec(ctx, "SELECT pg_advisory_unlock_shared($1::int4, $2::int4)", hi, lo)
		return false, err
	}
	for i := 0; i < flagTries; i++ {
		var ok bool
		if err := c.QueryRow(ctx, "SELECT pg_try_advisory_lock_shared($1::int4, $2::int4)", hi, lo).Scan(&ok); err != nil || ok {
			return ok, err
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
	return false, nil
}

// wait waits for a notification, for ops to be queued, or for ctx. It does
// not hand a context to pgx (whose watcher may be configured to send cancel
// requests): it interrupts the read with a past deadline instead.
func (l *listener) wait(ctx context.Context, c *pgx.Conn) (*pgconn.Notification, error) {
	l.mu.Lock()
	pending := len(l.ops) > 0
	l.mu.Unlock()
	if pending {
		return nil, nil
	}
	nc := c.PgConn().Conn()
	stop := make(chan struct{})
	interrupted := make(chan bool, 1)
	go func() {
		select {
		case <-ctx.Done():
		case <-l.poke:
		case <-stop:
			interrupted <- false
			return
		}
		_ = nc.SetReadDeadline(time.Now())
		interrupted <- true
	}()
	n, err := c.WaitForNotification(context.Background())
	close(stop)
	if <-interrupted {
		_ = nc.SetReadDeadline(time.Time{})
		if err != nil && !c.IsClosed() {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return n, nil // poked: run the queued ops
		}
	}
	return n, err
}

// flagHalves is the two-int4 advisory key of a waiter flag.
func flagHalves(id int64) (hi, lo int32) {
	u := uint64(id)
	return int32(u >> 32), int32(u)
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
