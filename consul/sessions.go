package consul

import (
	"context"
	"errors"
	"time"
)

// The Store's sessions, one per TTL class, in s.sessions under s.mu. A
// session removes itself from the map when it is lost or torn down; until
// it has, a lookup that finds it gone puts a new session in its place.

// use returns the live session of class, creating and starting it if
// needed, with a reference the caller drops with ss.drop.
func (s *Store) use(ctx context.Context, class time.Duration) (*session, error) {
	for {
		ss, creator, err := s.sessionOf(class)
		if err != nil {
			return nil, err
		}
		if creator {
			ss.start(ctx)
		} else {
			select {
			case <-ss.ready:
			case <-ctx.Done():
				ss.drop()
				return nil, ctx.Err()
			}
		}
		if ss.err == nil {
			return ss, nil
		}
		ss.drop()
		// The creator's context may have ended while ours has not: try again.
		if !creator && ctx.Err() == nil && (errors.Is(ss.err, context.Canceled) || errors.Is(ss.err, context.DeadlineExceeded)) {
			continue
		}
		return nil, ss.err
	}
}

// sessionOf returns the session of class with a reference taken, and
// whether it is new (the caller then starts it).
func (s *Store) sessionOf(class time.Duration) (ss *session, created bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false, s.closedErr("acquire")
	}
	if ss := s.sessions[class]; ss != nil && ss.hold() {
		return ss, false, nil
	}
	ss = newSession(s, class)
	s.sessions[class] = ss
	return ss, true, nil
}

// launch starts the goroutines of ss, whose Consul session was created by a
// request sent at t0, unless the store is closed. Holding s.mu orders it
// with Close: either Close sees ss started, or launch sees the store closed.
func (s *Store) launch(ss *session, t0 time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	ss.started(t0)
	s.wg.Add(3)
	go ss.keepalive(t0)
	go ss.housekeep()
	go ss.watch()
	return true
}

// forget removes ss from the sessions, if it is still the session of its
// class. The caller does not hold ss.mu.
func (s *Store) forget(ss *session) {
	s.mu.Lock()
	if s.sessions[ss.class] == ss {
		delete(s.sessions, ss.class)
	}
	s.mu.Unlock()
}
