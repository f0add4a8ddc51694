package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/wire"
)

// acquireFor makes the acquire body asks for: at once, with a wait the
// server runs (wait_ms, cut to MaxWait), or in the backend's own queue
// (queue). A grant made after the client went away is released: nobody
// would ever learn it.
func (s *Server) acquireFor(ctx context.Context, req leasehold.AcquireRequest, body wire.AcquireRequest) (leasehold.Grant, error) {
	var (
		g   leasehold.Grant
		err error
	)
	if body.Queue {
		g, err = s.acquireQueued(ctx, req, wire.Ms(body.WaitMs))
	} else {
		g, err = s.acquireWait(ctx, req, min(wire.Ms(body.WaitMs), MaxWait))
	}
	if err == nil && ctx.Err() != nil {
		rctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
		defer cancel()
		if s.store.Release(rctx, g) == nil {
			s.local.signal(g.Key)
			s.stats.pulse()
		}
		return leasehold.Grant{}, ctx.Err()
	}
	return g, err
}

// acquireQueued waits in the backend's FIFO queue for up to wait (0: as
// long as ctx lasts). When the wait runs out with the client still there,
// the answer is held, with the holder as the backend reads it then.
func (s *Server) acquireQueued(ctx context.Context, req leasehold.AcquireRequest, wait time.Duration) (leasehold.Grant, error) {
	wr, ok := s.store.(leasehold.Waiter)
	if !ok {
		return leasehold.Grant{}, &requestError{http.StatusNotImplemented, wire.CodeNotImplemented,
			fmt.Sprintf("the %s store has no queue of its own; leave out queue and the server waits for wait_ms", s.info.Name)}
	}
	done, err := s.waits.take(s.opts.MaxWaits, "acquires waiting", "MaxWaits", "--max-waits")
	if err != nil {
		return leasehold.Grant{}, err
	}
	defer done()
	defer s.stats.wait(req.Key)()
	qctx := ctx
	if wait > 0 {
		var cancel context.CancelFunc
		qctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	g, err := wr.AcquireWait(qctx, req)
	if err == nil || ctx.Err() != nil || qctx.Err() == nil {
		return g, err
	}
	held := &leasehold.HeldError{Key: req.Key}
	if h, herr := s.store.Holder(ctx, req.Key); herr == nil {
		held.Label, held.Token, held.Remaining = h.Label, h.Token, h.Remaining
	} else if !errors.Is(herr, leasehold.ErrNotHeld) {
		return leasehold.Grant{}, herr
	}
	return leasehold.Grant{}, held
}
