package zookeeper

import (
	"context"
	"errors"
	"time"
)

// The Store's sessions, one per TTL class, in s.sessions under s.mu. A
// session removes itself from the map when it is lost or torn down; until
// it has, a lookup that finds it gone puts a new session in its place.

// classGranularity is the step TTLs are rounded up to: TTLs within one
// step share a session.
const classGranularity = 100 * time.Millisecond

// classOf returns the class of ttl: ttl rounded up to classGranularity,
// but never above the store's MaxTTL (ttl itself is within it).
func (s *Store) classOf(ttl time.Duration) time.Duration {
	c := (ttl + classGranularity - 1) / classGranularity * classGranularity
	if c > s.info.MaxTTL {
		c = max(ttl, s.info.MaxTTL)
	}
	return c
}

// use returns the live session of class, creating and starting it if
// needed, with a reference the caller drops with ss.drop.
func (s *Store) use(ctx context.Context, class time.Duration) (*session, error) {
	for {
		ss, creator, err := s.sessionOf(class)
		if err != nil {
			return nil, err
		}
		if creator {
			ss.setUp(ctx)
		} else {
			select {
			case <-ss.up:
			case <-ctx.Done():
				ss.drop()
				return nil, ctx.Err()
			}
		}
		if ss.upErr == nil {
			return ss, nil
		}
		ss.drop()
		// The creator's context may have ended while ours has not: try again.
		if !creator && ctx.Err() == nil && (errors.Is(ss.upErr, context.Canceled) || errors.Is(ss.upErr, context.DeadlineExceeded)) {
			continue
		}
		return nil, ss.upErr
	}
}

// setUp starts ss and its housekeeping, recording the outcome in ss.upErr
// and closing ss.up.
func (ss *session) setUp(ctx context.Context) {
	defer close(ss.up)
	if err := ss.start(ctx); err != nil {
		ss.upErr = err
		ss.retire()
		return
	}
	if !ss.st.launch(ss) {
		ss.upErr = ss.st.closedErr("acquire")
		ss.retire()
		ss.closeSession()
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

// anySession returns a live session with a reference taken, for reads and
// watches: any established one, else one of the class of a TTL of
// readClass (clamped into the store's bounds).
func (s *Store) anySession(ctx context.Context) (*session, error) {
	s.mu.Lock()
	for _, ss := range s.sessions {
		if ss.isUp() && ss.hold() {
			s.mu.Unlock()
			return ss, nil
		}
	}
	s.mu.Unlock()
	return s.use(ctx, s.classOf(min(max(readClass, s.info.MinTTL), s.info.MaxTTL)))
}

// readClass is the TTL class of the session a store opens only to read.
const readClass = 15 * time.Second

// launch starts the housekeeping of ss unless the store is closed. Holding
// s.mu orders it with Close: either Close sees ss running, or launch sees
// the store closed.
func (s *Store) launch(ss *session) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	ss.mu.Lock()
	ss.running = true
	ss.lastUse = time.Now()
	ss.mu.Unlock()
	s.wg.Go(ss.housekeep)
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
