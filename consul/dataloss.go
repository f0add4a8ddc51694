package consul

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/leasehold-go/leasehold"
)

// ErrDataLost reports that the Consul cluster under a store lost its data
// since the store last read from it: its Raft index went back (a -dev agent
// restarted, every server's data folder wiped, a cluster built anew), or,
// on a -dev agent, a session of the store vanished. The entries that held
// the store's grants are gone, and another client may already hold their
// keys, so the store ends every lease it keeps at once (their Grant.Lost
// channels close, renewals are refused with this error's text). It matches
// ErrSessionLost too.
var ErrDataLost = fmt.Errorf("the Consul cluster lost its data (a -dev agent restarted, or data folders wiped): another client may hold the key: %w", ErrSessionLost)

// raftWatch is whether the agent said at open that it is a -dev agent.
// Info reads it on every Acquire, so it is an atomic, not a locked field.
type raftWatch struct {
	dev atomic.Bool
}

// isDev reports whether the agent is a -dev agent (checked by OpenURL).
func (w *raftWatch) isDev() bool { return w.dev.Load() }

// checkIndex compares the Raft index of a consistent read of a grant's
// entry (its X-Consul-Index: the entry's ModifyIndex, or the KV table's
// index if the entry is gone) with wrote, the ModifyIndex the grant's lock
// gave the entry. While the cluster keeps its data, the read's index is at
// least wrote (a later write of the entry, or its deletion's tombstone,
// has a greater index); below it, the cluster lost its data: every lease of
// the store ends, and checkIndex returns ErrDataLost with the two indexes.
// (Indexes of different keys are not compared: a key's read reports that
// key's index, which can be below another key's.)
func (s *Store) checkIndex(wrote, read uint64) error {
	if read == 0 || read >= wrote {
		return nil
	}
	err := fmt.Errorf("the Consul cluster's Raft index went back: the grant's entry was written at index %d, a read now reports %d: %w", wrote, read, ErrDataLost)
	s.endAll(err)
	return err
}

// sessionVanished is called when Consul answers that session ss of the
// store does not exist. A session is destroyed by someone, or expires, or
// is lost with the cluster's data: a consistent read of one of its grants'
// entries tells the last case from the others by its Raft index; on a -dev
// agent, whose restart is the usual loss, any vanished session is taken for
// a loss.
func (s *Store) sessionVanished(ctx context.Context, ss *session) {
	if name, index, ok := ss.anyGrant(); ok {
		_, meta, err := s.cli.KV().Get(name, (&api.QueryOptions{RequireConsistent: true}).WithContext(ctx))
		if err == nil && s.checkIndex(index, meta.LastIndex) != nil {
			return
		}
	}
	if s.raft.isDev() {
		s.endAll(fmt.Errorf("a session of the store vanished from the -dev agent, which keeps its state in memory (restarted?): %w", ErrDataLost))
	}
}

// anyGrant returns the KV key and lock index of one of the session's
// grants, if it has any.
func (ss *session) anyGrant() (name string, index uint64, ok bool) {
	ss.Grants(func(n string, g grantRec) bool {
		name, index, ok = n, g.index, true
		return false
	})
	return name, index, ok
}

// endAll ends every lease of the store: each session is marked lost with
// why, which its refused renewals and LostReason report.
func (s *Store) endAll(why error) {
	for _, ss := range s.sessions.All() {
		ss.markLostBecause(why)
	}
}

// LostReason implements leasehold.LostExplainer: why g's session was lost,
// if the store knows (the cluster lost its data: ErrDataLost), else nil.
func (s *Store) LostReason(g leasehold.Grant) error {
	if r := s.ref(g); r != nil && r.sess.IsLost() {
		return r.sess.LostErr()
	}
	return nil
}

// checkDev asks the agent whether it is a -dev agent (DebugConfig.DevMode
// of /v1/agent/self). An agent
// that does not say (an ACL token without agent:read) is taken for a normal
// one.
func (s *Store) checkDev(ctx context.Context, limit time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var self struct{ DebugConfig struct{ DevMode bool } }
	if _, err := s.cli.Raw().Query("/v1/agent/self", &self, (&api.QueryOptions{}).WithContext(ctx)); err != nil {
		return
	}
	s.raft.dev.Store(self.DebugConfig.DevMode)
}
