package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/leasehold-go/leasehold"
)

// The listening loop: one connection per store that LISTENs on the
// table's channel, holds the waiter flags of the keys that have
// subscribers, and hands notifications to them (see notify.go).

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
			return &leasehold.StoreError{Store: l.c.name, Op: "subscribe", Err: leasehold.ErrClosed}
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
			return l.c.fail(ctx, "subscribe", fmt.Errorf("cannot LISTEN: %w", lastErr))
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
			return &leasehold.StoreError{Store: l.c.name, Op: "subscribe", Err: fmt.Errorf("%w: no listening connection after %s", ErrUnreachable, listenWait)}
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
	if cs := l.c.opts.ListenConnString; cs != "" {
		c, err := pgx.Connect(ctx, cs)
		if err != nil {
			return err
		}
		defer closeConn(c)
		return l.serveConn(ctx, c)
	}
	return l.c.q.listen(ctx, func(c *pgx.Conn) error { return l.serveConn(ctx, c) })
}

func (l *listener) serveConn(ctx context.Context, c *pgx.Conn) error {
	if _, err := c.Exec(ctx, "LISTEN "+quoteIdent(l.c.channel)); err != nil {
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
	id, _ := l.c.lockID(op.key)
	hi, lo := flagHalves(id)
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
