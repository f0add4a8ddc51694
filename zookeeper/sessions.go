package zookeeper

import (
	"context"
	"time"
)

// The classes of the Store's sessions (s.sessions), and their set-up.

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

// SetUp starts ss and its housekeeping, then closes Up's channel. On
// failure it records the error, retires the session, and starts nothing.
func (ss *session) SetUp(ctx context.Context) {
	ss.SetUpWith(func() error { return ss.start(ctx) },
		func() bool { return ss.st.launch(ss) },
		ss.closeSession,
		func() error { return ss.st.closedErr("acquire") })
}

// anySession returns a live session with a reference taken, for reads and
// watches: any established one, else one of the class of a TTL of
// readClass (clamped into the store's bounds).
func (s *Store) anySession(ctx context.Context) (*session, error) {
	if ss, ok := s.sessions.Find(func(ss *session) bool { return ss.IsUp() && ss.Hold() }); ok {
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
		ss.Started(time.Time{})
		s.sessions.Go(ss.housekeep)
	})
}
