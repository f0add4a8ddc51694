package remote

import (
	"context"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/wire"
)

// acquireWait waits for req.Key in the backend's FIFO queue, through one
// request that the server holds open until the grant is made or ctx ends
// (the server then leaves the queue). A grant the server made after this
// request ended is released by the server.
func (s *Store) acquireWait(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	if err := leasehold.CheckAcquire(req, s.info); err != nil {
		return leasehold.Grant{}, err
	}
	body := wire.AcquireRequest{Key: req.Key, Owner: req.Owner, Label: req.Label, TTLMs: wire.MsCeil(req.TTL), Queue: true}
	if d, ok := ctx.Deadline(); ok {
		body.WaitMs = max(wire.MsCeil(time.Until(d)), 1)
	}
	var g wire.Grant
	server, err := s.callOn(ctx, route{pinned: -1, once: true}, "acquire", "POST", "v1/acquire", body, &g)
	if err != nil {
		return leasehold.Grant{}, err
	}
	return leasehold.Grant{Key: req.Key, Owner: req.Owner, Label: req.Label, Token: g.Token,
		TTL: min(req.TTL, wire.Ms(g.TTLMs)), Private: privateOf(g.Handle, server)}, nil
}
