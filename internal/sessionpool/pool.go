package sessionpool

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Session is what a Pool needs of a store's session. Its methods are
// called without the pool's mutex held, except Hold, which the pool calls
// holding it (a session's own mutex is taken after the pool's, never
// before).
type Session interface {
	comparable
	// Hold takes a reference on the session, unless it is gone (lost, torn
	// down or closed): then it reports false and takes none.
	Hold() bool
	// Drop drops a reference taken by Hold, or the one a new session
	// starts with (its creator's).
	Drop()
	// SetUp sets up a new session for its creator, within ctx. Whatever
	// the outcome, it records it for UpErr, then closes Up's channel. On
	// failure it removes the session with Pool.Forget.
	SetUp(ctx context.Context)
	// Up returns a channel closed when SetUp has finished.
	Up() <-chan struct{}
	// UpErr reports why SetUp failed, or nil; it is read once Up is closed.
	UpErr() error
}

// Pool is a store's table of sessions, one per TTL class. Create it with
// New; it is safe for concurrent use.
type Pool[S Session] struct {
	create    func(class time.Duration) S
	closedErr func(op string) error

	ctx    context.Context // ended by Shut; the store's background calls use it
	cancel context.CancelFunc
	wg     sync.WaitGroup // the store's goroutines, which Shut waits for

	mu       sync.Mutex
	sessions map[time.Duration]S
	closed   bool
}

// New returns an empty, open Pool. create returns a new session of a
// class, not set up, holding one reference (its creator's); closedErr
// returns the error a call op gets once the pool is closed (Use's op is
// "acquire").
func New[S Session](create func(class time.Duration) S, closedErr func(op string) error) *Pool[S] {
	ctx, cancel := context.WithCancel(context.Background())
	return &Pool[S]{create: create, closedErr: closedErr, ctx: ctx, cancel: cancel, sessions: make(map[time.Duration]S)}
}

// Use returns the live session of class, creating and setting it up if
// needed, with a reference the caller drops with the session's Drop.
func (p *Pool[S]) Use(ctx context.Context, class time.Duration) (S, error) {
	var zero S
	for {
		ss, creator, err := p.sessionOf(class)
		if err != nil {
			return zero, err
		}
		if creator {
			ss.SetUp(ctx)
		} else {
			select {
			case <-ss.Up():
			case <-ctx.Done():
				ss.Drop()
				return zero, ctx.Err()
			}
		}
		err = ss.UpErr()
		if err == nil {
			return ss, nil
		}
		ss.Drop()
		// The creator's context may have ended while ours has not: try again.
		if !creator && ctx.Err() == nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			continue
		}
		return zero, err
	}
}

// sessionOf returns the session of class with a reference taken, and
// whether it is new (the caller then sets it up).
func (p *Pool[S]) sessionOf(class time.Duration) (ss S, created bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ss, false, p.closedErr("acquire")
	}
	if ss, ok := p.sessions[class]; ok && ss.Hold() {
		return ss, false, nil
	}
	ss = p.create(class)
	p.sessions[class] = ss
	return ss, true, nil
}

// Forget removes ss from the pool, if it is still the session of class.
// The caller holds none of ss's locks that Hold takes.
func (p *Pool[S]) Forget(class time.Duration, ss S) {
	p.mu.Lock()
	if cur, ok := p.sessions[class]; ok && cur == ss {
		delete(p.sessions, class)
	}
	p.mu.Unlock()
}

// WhileOpen runs fn holding the pool's mutex, unless the pool is closed,
// and reports whether it ran: either Close sees what fn did, or WhileOpen
// sees the pool closed. fn must not call the pool.
func (p *Pool[S]) WhileOpen(fn func()) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	fn()
	return true
}

// Close closes the pool and empties it. It returns the sessions it held,
// and whether this call closed it (false: it was closed already, and the
// sessions are nil).
func (p *Pool[S]) Close() (all []S, first bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, false
	}
	p.closed = true
	all = make([]S, 0, len(p.sessions))
	for _, ss := range p.sessions {
		all = append(all, ss)
	}
	clear(p.sessions)
	return all, true
}

// Closed reports whether the pool is closed.
func (p *Pool[S]) Closed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// Find returns the first session, in no set order, for which fn reports
// true, calling fn holding the pool's mutex. fn may call the session's
// Hold, not the pool.
func (p *Pool[S]) Find(fn func(S) bool) (S, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ss := range p.sessions {
		if fn(ss) {
			return ss, true
		}
	}
	var zero S
	return zero, false
}

// All returns the pool's sessions, in no set order.
func (p *Pool[S]) All() []S {
	p.mu.Lock()
	defer p.mu.Unlock()
	all := make([]S, 0, len(p.sessions))
	for _, ss := range p.sessions {
		all = append(all, ss)
	}
	return all
}
