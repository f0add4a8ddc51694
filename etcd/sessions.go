package etcd

import "time"

// The Store's sessions, one per TTL class, are in s.sessions (a
// sessionpool.Pool): Use returns a class's session, creating it with
// newSession and setting it up with SetUp if needed; a session removes
// itself with Forget when it is lost or torn down.

// launch starts the goroutines of ss, whose etcd lease was granted by a
// request sent at t0, unless the store is closed. Holding the pool's mutex
// orders it with Close: either Close sees ss started, or launch sees the
// store closed.
func (s *Store) launch(ss *session, t0 time.Time) bool {
	return s.sessions.WhileOpen(func() {
		ss.Started(t0.Add(ss.leaseTTL))
		s.wg.Add(2)
		go ss.keepalive(t0)
		go ss.housekeep()
	})
}
