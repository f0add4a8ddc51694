package consul

import (
	"context"
	"fmt"
	"sync"
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

// raftWatch is what a Store knows of the cluster's Raft index: the highest
// index it has read (a KV read's X-Consul-Index, the index of the whole KV
// table, which only grows while the cluster keeps its data), and whether the
// agent said at open that it is a -dev agent.
type raftWatch struct {
	mu   sync.Mutex
	high uint64
	dev  bool
}

// isDev reports whether the agent is a -dev agent (checked by OpenURL).
func (w *raftWatch) isDev() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dev
}

// seeIndex records the Raft index of a read the store made (consistent:
// whether it is a consistent read, one the leader confirmed; a default read
// may come from a leader that has not yet applied every committed entry, so
// it only raises the mark). If a consistent read's index is below the
// highest seen, the cluster lost its data: every lease of the store ends,
// and seeIndex returns ErrDataLost with the two indexes; the mark starts
// again from the new index.
func (s *Store) seeIndex(idx uint64, consistent bool) error {
	if idx == 0 {
		return nil
	}
	w := &s.raft
	w.mu.Lock()
	if idx >= w.high || !consistent {
		w.high = max(w.high, idx)
		w.mu.Unlock()
		return nil
	}
	why := fmt.Sprintf("the Consul cluster's Raft index went back from %d to %d", w.high, idx)
	w.high = idx
	w.mu.Unlock()
	err := fmt.Errorf("%s: %w", why, ErrDataLost)
	s.endAll(err)
	return err
}

// sessionVanished is called when Consul answers that a session of the store
// does not exist. A session is destroyed by someone, or expired, or lost
// with the cluster's data: a read of the prefix tells the last case from
// the others by its Raft index; on a -dev agent, whose restart is the usual
// loss and whose index may have grown past the old one by then, any vanished
// session is taken for a loss.
func (s *Store) sessionVanished(ctx context.Context) {
	_, meta, err := s.cli.KV().Get(s.prefix, (&api.QueryOptions{RequireConsistent: true}).WithContext(ctx))
	if err == nil && s.seeIndex(meta.LastIndex, true) != nil {
		return
	}
	if s.raft.isDev() {
		s.endAll(fmt.Errorf("a session of the store vanished from the -dev agent, which keeps its state in memory (restarted?): %w", ErrDataLost))
	}
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
	if r := s.ref(g); r != nil && r.sess.isLost() {
		return r.sess.lostErr
	}
	return nil
}

// checkDev asks the agent whether it is a -dev agent (DebugConfig.DevMode
// of /v1/agent/self), and reads the prefix for the Raft index. An agent
// that does not say (an ACL token without agent:read) is taken for a normal
// one.
func (s *Store) checkDev(ctx context.Context, limit time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	q := (&api.QueryOptions{RequireConsistent: true}).WithContext(ctx)
	if _, meta, err := s.cli.KV().Get(s.prefix, q); err == nil {
		_ = s.seeIndex(meta.LastIndex, true)
	}
	var self struct{ DebugConfig struct{ DevMode bool } }
	if _, err := s.cli.Raw().Query("/v1/agent/self", &self, (&api.QueryOptions{}).WithContext(ctx)); err != nil {
		return
	}
	dev := self.DebugConfig.DevMode
	s.raft.mu.Lock()
	s.raft.dev = dev
	s.raft.mu.Unlock()
}
