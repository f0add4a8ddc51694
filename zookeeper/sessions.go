package zookeeper

import (
	"context"
	"time"
)

// The Store's sessions, one per TTL class, are in s.sessions (a
// sessionpool.Pool): Use returns a class's session, creating it with
// newSession and setting it up with SetUp if needed; a session removes
// itself with Forget when it is lost or torn down.

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

// SetUp starts ss and its housekeeping, recording the outcome in ss.upErr
// and closing ss.up.
func (ss *session) SetUp(ctx context.Context) {
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

// Up returns ss.up, closed once SetUp has finished; UpErr says how.
func (ss *session) Up() <-chan struct{} { return ss.up }

// UpErr reports why SetUp failed, or nil. It is read once Up is closed.
func (ss *session) UpErr() error { return ss.upErr }

// anySession returns a live session with a reference taken, for reads and
// watches: any established one, else one of the class of a TTL of
// readClass (clamped into the store's bounds).
func (s *Store) anySession(ctx context.Context) (*session, error) {
	if ss, ok := s.sessions.Find(func(ss *session) bool { return ss.isUp() && ss.Hold() }); ok {
		return ss, nil
	}
	return s.sessions.Use(ctx, s.classOf(min(max(readClass, s.info.MinTTL), s.info.MaxTTL)))
}

// readClass is the TTL class of the session a store opens only to read.
const readClass = 15 * time.Second

// launch starts the housekeeping of ss unless the store is closed. Holding
// the pool's mutex orders it with Close: either Close sees ss running, or
// launch sees the store closed.
func (s *Store) launch(ss *session) bool {
	return s.sessions.WhileOpen(func() {
		ss.mu.Lock()
		ss.running = true
		ss.lastUse = time.Now()
		ss.mu.Unlock()
		s.wg.Go(ss.housekeep)
	})
}
