package etcd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/leasehold-go/leasehold"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// A session is one etcd lease shared by every grant and waiter of one TTL
// class on one Store, kept alive by one keepalive stream. Grants are keys
// put under the session's lease, so holding 10,000 leases of one TTL costs
// one keepalive per period, not 10,000.
//
// The session's etcd lease is longer than the class's TTL (see leaseSeconds)
// and kept alive often enough that, while keepalives succeed, it outlives
// every grant's TTL. Each grant's own TTL is enforced by the housekeeping
// goroutine: a grant not renewed within its TTL is deleted (token-checked),
// as if a per-key lease had expired.
type session struct {
	st       *Store
	class    time.Duration // the TTL granted to leases of this class (whole seconds)
	id       clientv3.LeaseID
	leaseTTL time.Duration // the etcd lease's TTL as the server granted it
	interval time.Duration // keepalive period while healthy

	ready chan struct{} // closed once the etcd lease is granted (err nil) or not (err set)
	err   error

	lost     chan struct{} // closed when the etcd lease is known or presumed gone
	lostOnce sync.Once
	stop     chan struct{} // closed to end the goroutines (teardown, loss, Close)
	stopOnce sync.Once
	kick     chan struct{} // wakes housekeeping early

	// Guarded by st.mu.
	expiry   time.Time            // lower bound of the etcd lease's expiry, by our monotonic clock
	grants   map[string]*grantRec // by holder key
	inflight map[string]int       // acquires in progress, by holder key
	orphans  []orphan             // keys of ours to delete
	refs     int                  // acquires and waits in progress
	lastUse  time.Time
	gone     bool // removed from st.sessions: lost or torn down
	started  bool // goroutines running
}

// grantRec is a grant the session keeps alive.
type grantRec struct {
	token    int64
	deadline time.Time // the grant expires here unless renewed
}

// orphan is a key of ours that must be deleted: a grant that expired without
// renewal, a waiter's entry whose delete failed, or the possible result of
// an acquire whose reply was lost.
type orphan struct {
	name  string
	token int64 // delete only if the key's CreateRevision is token; 0: unknown, see deleteIfUntracked
}

// leaseSeconds returns the etcd lease TTL for a class of c seconds: half as
// long again (at least one second more), so that keepalives every
// (lease-class)/2 keep the lease at least a class's TTL ahead of any grant.
func leaseSeconds(c int64) int64 {
	s := (3*c + 1) / 2
	if s < c+1 {
		s = c + 1
	}
	return s
}

// classOf rounds ttl up to whole seconds: etcd leases have second granularity.
func classOf(ttl time.Duration) time.Duration {
	return (ttl + time.Second - 1) / time.Second * time.Second
}

// use returns the live session of class, creating it if needed, with a
// reference the caller drops with unuse.
func (s *Store) use(ctx context.Context, class time.Duration) (*session, error) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, s.closedErr("acquire")
		}
		ss := s.sessions[class]
		creator := ss == nil
		if creator {
			ss = &session{
				st:       s,
				class:    class,
				ready:    make(chan struct{}),
				lost:     make(chan struct{}),
				stop:     make(chan struct{}),
				kick:     make(chan struct{}, 1),
				grants:   make(map[string]*grantRec),
				inflight: make(map[string]int),
			}
			s.sessions[class] = ss
		}
		ss.refs++
		s.mu.Unlock()

		if creator {
			ss.start(ctx)
		} else {
			select {
			case <-ss.ready:
			case <-ctx.Done():
				s.unuse(ss)
				return nil, ctx.Err()
			}
		}
		if ss.err == nil {
			return ss, nil
		}
		s.unuse(ss)
		// The creator's context may have ended while ours has not: try again.
		if !creator && ctx.Err() == nil && (errors.Is(ss.err, context.Canceled) || errors.Is(ss.err, context.DeadlineExceeded)) {
			continue
		}
		return nil, ss.err
	}
}

// unuse drops a reference taken by use.
func (s *Store) unuse(ss *session) {
	s.mu.Lock()
	ss.refs--
	ss.lastUse = time.Now()
	idle := ss.refs == 0 && len(ss.grants) == 0
	s.mu.Unlock()
	if idle && s.idle < 0 {
		ss.poke()
	}
}

// start grants the session's etcd lease and starts its goroutines. On
// failure it records err, removes the session, and starts nothing.
func (ss *session) start(ctx context.Context) {
	s := ss.st
	defer close(ss.ready)
	c := int64(ss.class / time.Second)
	t0 := time.Now()
	resp, err := s.cli.Grant(clientv3.WithRequireLeader(ctx), leaseSeconds(c))
	if err == nil && resp.Error != "" {
		err = errors.New(resp.Error)
	}
	if err != nil {
		ss.err = s.storeErrOn(ctx, "grant session lease", err)
		s.mu.Lock()
		ss.gone = true
		if s.sessions[ss.class] == ss {
			delete(s.sessions, ss.class)
		}
		s.mu.Unlock()
		return
	}
	ss.id = resp.ID
	ss.leaseTTL = time.Duration(resp.TTL) * time.Second
	ss.interval = (ss.leaseTTL - ss.class) / 2

	s.mu.Lock()
	if s.closed {
		ss.err = s.closedErr("acquire")
		ss.gone = true
		if s.sessions[ss.class] == ss {
			delete(s.sessions, ss.class)
		}
		s.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, _ = s.cli.Revoke(ctx, ss.id) // nothing is under it yet
		return
	}
	ss.expiry = t0.Add(ss.leaseTTL)
	ss.lastUse = time.Now()
	ss.started = true
	s.wg.Add(2)
	s.mu.Unlock()
	go ss.keepalive(t0)
	go ss.housekeep()
}

// halt ends the session's goroutines.
func (ss *session) halt() { ss.stopOnce.Do(func() { close(ss.stop) }) }

// poke wakes the housekeeping goroutine.
func (ss *session) poke() {
	select {
	case ss.kick <- struct{}{}:
	default:
	}
}

// markLost records that the session's etcd lease is gone: every grant on it
// is lost, Lost channels close, and the next acquire of the class starts a
// new session.
func (ss *session) markLost() {
	ss.lostOnce.Do(func() {
		s := ss.st
		s.mu.Lock()
		ss.gone = true
		if s.sessions[ss.class] == ss {
			delete(s.sessions, ss.class)
		}
		ss.grants = map[string]*grantRec{}
		ss.orphans = nil
		s.mu.Unlock()
		close(ss.lost)
		ss.halt()
	})
}

// isLost reports whether the session has been lost.
func (ss *session) isLost() bool {
	select {
	case <-ss.lost:
		return true
	default:
		return false
	}
}

// ttlFrom returns the TTL a grant acquired or renewed by a request sent at t0
// can count on: the class, or less if the etcd lease's known expiry is
// nearer (keepalives failing). Caller holds st.mu.
func (ss *session) ttlFrom(t0 time.Time) time.Duration {
	if rem := ss.expiry.Sub(t0); rem < ss.class {
		return rem
	}
	return ss.class
}

// fresh returns the send time t0 for a request of op on the session, first
// refreshing the etcd lease with one keepalive if its known expiry is less
// than a class's TTL after t0 (keepalives late or failing), so that a grant
// made or renewed by a request sent at t0 can count on the class's TTL.
func (ss *session) fresh(ctx context.Context, op string) (time.Time, error) {
	s := ss.st
	t0 := time.Now()
	s.mu.Lock()
	ok := ss.ttlFrom(t0) >= ss.class
	s.mu.Unlock()
	if ok {
		return t0, nil
	}
	resp, err := s.cli.KeepAliveOnce(clientv3.WithRequireLeader(ctx), ss.id)
	if err != nil {
		if isLeaseNotFound(err) {
			ss.markLost()
			return t0, &leasehold.StoreError{Store: Name, Op: op, Err: ErrSessionLost}
		}
		return t0, s.storeErrOn(ctx, op, fmt.Errorf("%w: %w", errKeepaliveOverdue, err))
	}
	s.mu.Lock()
	if exp := t0.Add(time.Duration(resp.TTL) * time.Second); exp.After(ss.expiry) {
		ss.expiry = exp
	}
	ok = ss.ttlFrom(t0) >= ss.class
	s.mu.Unlock()
	if !ok {
		return t0, &leasehold.StoreError{Store: Name, Op: op, Err: errKeepaliveOverdue}
	}
	return t0, nil
}

// keepalive keeps the session's etcd lease alive over one LeaseKeepAlive
// stream, re-opened after errors. Each request's send time anchors the
// expiry lower bound (never the reply's arrival). When the lower bound
// passes without a successful keepalive, or etcd answers that the lease is
// gone, the session is lost.
func (ss *session) keepalive(t0 time.Time) {
	s := ss.st
	defer s.wg.Done()
	lc := pb.NewLeaseClient(s.cli.ActiveConnection())

	type result struct {
		resp *pb.LeaseKeepAliveResponse
		err  error
	}
	var (
		stream   pb.Lease_LeaseKeepAliveClient
		cancel   context.CancelFunc
		results  chan result
		recvDone chan struct{}
	)
	closeStream := func() {
		if stream != nil {
			cancel()
			<-recvDone
			stream = nil
		}
	}
	defer closeStream()
	openStream := func() {
		sctx, c := context.WithCancel(clientv3.WithRequireLeader(s.ctx))
		st, err := lc.LeaseKeepAlive(sctx)
		if err != nil {
			c()
			return
		}
		stream, cancel = st, c
		results = make(chan result, 1)
		recvDone = make(chan struct{})
		go func(results chan<- result, done chan<- struct{}) {
			defer close(done)
			for {
				resp, err := st.Recv()
				select {
				case results <- result{resp, err}:
				case <-sctx.Done():
					return
				}
				if err != nil {
					return
				}
			}
		}(results, recvDone)
	}

	retry := ss.interval / 8
	if retry > 100*time.Millisecond {
		retry = 100 * time.Millisecond
	}
	next := t0.Add(ss.interval)
	timer := time.NewTimer(time.Until(next))
	defer timer.Stop()
	for {
		select {
		case <-ss.stop:
			return
		case <-timer.C:
		}
		if stream == nil {
			openStream()
		}
		ok := false
		if stream != nil {
			sent := time.Now()
			err := stream.Send(&pb.LeaseKeepAliveRequest{ID: int64(ss.id)})
			if err == nil {
				wait := time.NewTimer(ss.interval)
				select {
				case r := <-results:
					switch {
					case r.err != nil:
					case r.resp.TTL <= 0:
						wait.Stop()
						ss.markLost() // etcd says the lease is gone
						return
					default:
						ok = true
						s.mu.Lock()
						if exp := sent.Add(time.Duration(r.resp.TTL) * time.Second); exp.After(ss.expiry) {
							ss.expiry = exp
						}
						s.mu.Unlock()
					}
				case <-wait.C:
				case <-ss.stop:
					wait.Stop()
					return
				}
				wait.Stop()
			}
			if !ok {
				closeStream()
			}
		}
		now := time.Now()
		if ok {
			next = now.Add(ss.interval)
			retry = min(ss.interval/8, 100*time.Millisecond)
		} else {
			s.mu.Lock()
			expired := !now.Before(ss.expiry)
			s.mu.Unlock()
			if expired {
				// The lease may still live if the server took a keepalive whose
				// reply we lost: revoke it so its keys do not outlive the grants.
				ss.markLost()
				closeStream()
				ctx, c := context.WithTimeout(s.ctx, 2*time.Second)
				_, _ = s.cli.Revoke(ctx, ss.id)
				c()
				return
			}
			next = now.Add(retry)
			retry = min(2*retry, ss.interval/2)
		}
		timer.Reset(time.Until(next))
	}
}

// sweepPeriod is how often housekeeping looks for expired grants.
func (ss *session) sweepPeriod() time.Duration {
	return min(max(ss.class/8, 50*time.Millisecond), time.Second)
}

// housekeep deletes expired grants and orphans, and tears the session down
// when it has been idle for the store's idle timeout.
func (ss *session) housekeep() {
	s := ss.st
	defer s.wg.Done()
	period := ss.sweepPeriod()
	t := time.NewTimer(period)
	defer t.Stop()
	for {
		select {
		case <-ss.stop:
			return
		case <-t.C:
		case <-ss.kick:
		}
		ss.sweep()
		if ss.maybeTeardown() {
			return
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(period)
	}
}

// sweep moves grants past their deadline to the orphans and deletes orphans.
func (ss *session) sweep() {
	s := ss.st
	now := time.Now()
	s.mu.Lock()
	for name, g := range ss.grants {
		if now.After(g.deadline) {
			delete(ss.grants, name)
			ss.orphans = append(ss.orphans, orphan{name: name, token: g.token})
			ss.lastUse = now
		}
	}
	todo := ss.orphans
	ss.orphans = nil
	s.mu.Unlock()
	if len(todo) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, max(ss.sweepPeriod(), time.Second))
	defer cancel()
	failed := s.deleteOrphans(ctx, ss, todo)
	if len(failed) > 0 {
		s.mu.Lock()
		if !ss.gone {
			ss.orphans = append(ss.orphans, failed...)
		}
		s.mu.Unlock()
	}
}

// maybeTeardown revokes the session's lease if it has had no grants, waiters
// or pending work for the idle timeout.
func (ss *session) maybeTeardown() bool {
	s := ss.st
	idle := max(s.idle, 0)
	s.mu.Lock()
	if ss.gone || ss.refs > 0 || len(ss.grants) > 0 || len(ss.orphans) > 0 || len(ss.inflight) > 0 || time.Since(ss.lastUse) < idle {
		s.mu.Unlock()
		return false
	}
	ss.gone = true
	if s.sessions[ss.class] == ss {
		delete(s.sessions, ss.class)
	}
	s.mu.Unlock()
	ss.halt()
	ctx, cancel := context.WithTimeout(s.ctx, 2*time.Second)
	defer cancel()
	_, _ = s.cli.Revoke(ctx, ss.id)
	return true
}

// maxBatch bounds the nested transactions in one etcd transaction: etcd
// refuses more than --max-txn-ops (default 128) operations, counting a nested
// transaction's compares against what is left of the budget.
const maxBatch = 64

// deleteOrphans deletes what it can of todo and returns the rest.
func (s *Store) deleteOrphans(ctx context.Context, ss *session, todo []orphan) (failed []orphan) {
	var batch []orphan
	for _, o := range todo {
		if o.token == 0 {
			if !s.deleteIfUntracked(ctx, ss, o) {
				failed = append(failed, o)
			}
			continue
		}
		batch = append(batch, o)
	}
	for len(batch) > 0 {
		n := min(len(batch), maxBatch)
		chunk := batch[:n]
		batch = batch[n:]
		ops := make([]clientv3.Op, 0, n)
		for _, o := range chunk {
			ops = append(ops, clientv3.OpTxn(
				[]clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(o.name), "=", o.token)},
				[]clientv3.Op{clientv3.OpDelete(o.name)}, nil))
		}
		if _, err := s.cli.Txn(ctx).Then(ops...).Commit(); err != nil {
			failed = append(failed, chunk...)
		}
	}
	return failed
}

// deleteIfUntracked deletes o.name if it is under the session's lease and is
// not a grant the session tracks or is acquiring: the result of an acquire
// whose reply was lost. It reports whether o is settled.
func (s *Store) deleteIfUntracked(ctx context.Context, ss *session, o orphan) bool {
	s.mu.Lock()
	busy := ss.inflight[o.name] > 0
	s.mu.Unlock()
	if busy {
		return false
	}
	resp, err := s.cli.Get(ctx, o.name)
	if err != nil {
		return false
	}
	if len(resp.Kvs) == 0 {
		return true
	}
	kv := resp.Kvs[0]
	if clientv3.LeaseID(kv.Lease) != ss.id {
		return true // someone else's
	}
	s.mu.Lock()
	g := ss.grants[o.name]
	tracked := g != nil && g.token == kv.CreateRevision
	busy = ss.inflight[o.name] > 0
	s.mu.Unlock()
	if tracked {
		return true
	}
	if busy {
		return false
	}
	_, err = s.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(o.name), "=", kv.CreateRevision)).
		Then(clientv3.OpDelete(o.name)).Commit()
	return err == nil
}
