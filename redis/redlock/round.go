package redlock

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/redis/internal/core"
)

// answer is one master's reply in a round.
type answer struct {
	i     int         // the master
	tok   uint64      // acquire: the token it granted
	held  *core.Lease // acquire: the lease of the owner that holds the key
	stale uint64      // acquire: the master's counter, at or above the token
	ok    bool        // renew, release: the script's 1
	err   error
}

// round is one request sent to every master at once. The caller reads the
// answers as they come (next) and stops reading when the outcome is decided
// (decide): the answers still to come go to the round's late function, run
// by the goroutine that got each, so that no call waits for its slowest
// master. Every request of the round is bounded by one deadline, the node
// timeout from the round's start, and ends when the store's Close gives up
// on it.
//
// A round holds one count of Store.inflight per request and one for its
// caller, released by decide: Close waits for them.
type round struct {
	s       *Store
	req     func(ctx context.Context, i int) answer
	ctx     reqCtx
	cancel  context.CancelFunc
	ch      chan answer  // sized to the masters: a request never blocks on it
	left    int          // answers the caller has not read; the caller's own
	running atomic.Int32 // requests not finished; the last one cancels ctx

	mu      sync.Mutex
	decided bool
	late    func(answer)
}

// reqCtx is the context of a round's requests: the round's deadline and
// the store's end, with the values of the caller's context (a tracing span,
// say). The caller's cancellation does not reach the requests: a caller
// that gives up returns at once, and the answers still come, so that what
// the round took is cleaned up by its token rather than guessed at.
type reqCtx struct {
	context.Context // WithTimeout(Store.bg, node timeout)
	vals            context.Context
}

// Value finds the deadline context's own keys first (the context package
// looks up its parent cancelCtx by a key: it must find the round's, whose
// Done it matches, or it would start a goroutine per derived context).
func (c *reqCtx) Value(key any) any {
	if v := c.Context.Value(key); v != nil {
		return v
	}
	return c.vals.Value(key)
}

// start sends req to every master, or to those whose targets[i] is set
// when targets is not nil. It fails with ErrClosed once Close has begun.
func (s *Store) start(ctx context.Context, op string, timeout time.Duration, targets []bool,
	req func(ctx context.Context, i int) answer) (*round, error) {
	n := len(s.nodes)
	if targets != nil {
		n = 0
		for _, t := range targets {
			if t {
				n++
			}
		}
	}
	s.mu.RLock()
	if s.closed.Load() {
		s.mu.RUnlock()
		return nil, &leasehold.StoreError{Store: Name, Op: op, Err: leasehold.ErrClosed}
	}
	s.inflight.Add(n + 1)
	s.mu.RUnlock()
	r := &round{s: s, req: req, ch: make(chan answer, n), left: n}
	if n == 0 {
		return r, nil
	}
	var dctx context.Context
	dctx, r.cancel = context.WithTimeout(s.bg, timeout)
	r.ctx = reqCtx{Context: dctx, vals: ctx}
	r.running.Store(int32(n))
	for i := range s.nodes {
		if targets == nil || targets[i] {
			s.dispatch(r, i)
		}
	}
	return r, nil
}

// run sends the request to master i and hands over its answer.
func (r *round) run(i int) {
	defer r.s.inflight.Done()
	a := r.req(&r.ctx, i)
	a.i = i
	r.mu.Lock()
	if !r.decided {
		r.ch <- a
		r.mu.Unlock()
	} else {
		late := r.late
		r.mu.Unlock()
		if late != nil {
			late(a)
		}
	}
	if r.running.Add(-1) == 0 {
		r.cancel()
	}
}

// next returns the next answer, or the error of ctx when it ends first.
func (r *round) next(ctx context.Context) (answer, error) {
	select {
	case a := <-r.ch:
		r.left--
		return a, nil
	case <-ctx.Done():
		return answer{}, ctx.Err()
	}
}

// poll returns an answer that has come, if one has.
func (r *round) poll() (answer, bool) {
	select {
	case a := <-r.ch:
		r.left--
		return a, true
	default:
		return answer{}, false
	}
}

// decide ends the caller's reading. Answers that came but were not read,
// and those still to come, go to late (nil drops them); the ones already
// come are handed over here, so late must not block. Every path out of a
// round calls decide once.
func (r *round) decide(late func(answer)) {
	r.mu.Lock()
	r.decided, r.late = true, late
	r.mu.Unlock()
	for r.left > 0 {
		select {
		case a := <-r.ch:
			r.left--
			if late != nil {
				late(a)
			}
			continue
		default:
		}
		break
	}
	r.s.inflight.Done()
}

// background runs f on a context bounded by timeout and by Close. The
// caller must hold a count of Store.inflight (a round's), so that Close
// cannot have stopped waiting.
func (s *Store) background(timeout time.Duration, f func(ctx context.Context)) {
	s.inflight.Add(1)
	go func() {
		defer s.inflight.Done()
		ctx, cancel := context.WithTimeout(s.bg, timeout)
		defer cancel()
		f(ctx)
	}()
}
