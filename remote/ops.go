package remote

import (
	"context"
	"net/url"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/wire"
)

// handle is a grant's Private: the handle of a grant a server keeps, and
// which server (its index) keeps it.
type handle struct {
	id     string
	server int
}

// handleOf returns g's handle; its id is "" for a grant no server keeps.
func handleOf(g leasehold.Grant) handle {
	h, _ := g.Private.(handle)
	return h
}

// Acquire asks the server for req.Key, without waiting.
func (s *Store) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	if err := leasehold.CheckAcquire(req, s.info); err != nil {
		return leasehold.Grant{}, err
	}
	var g wire.Grant
	body := wire.AcquireRequest{Key: req.Key, Owner: req.Owner, Label: req.Label, TTLMs: wire.MsCeil(req.TTL)}
	server, err := s.callOn(ctx, route{pinned: -1, once: true}, "acquire", "POST", "v1/acquire", body, &g)
	if err != nil {
		return leasehold.Grant{}, err
	}
	return leasehold.Grant{Key: req.Key, Owner: req.Owner, Label: req.Label, Token: g.Token,
		TTL: min(req.TTL, wire.Ms(g.TTLMs)), Private: privateOf(g.Handle, server)}, nil
}

// Renew asks the server to extend g by g.TTL.
func (s *Store) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	if err := leasehold.CheckRenew(g, s.info); err != nil {
		return leasehold.Grant{}, err
	}
	var ng wire.Grant
	h := handleOf(g)
	body := wire.GrantRequest{Key: g.Key, Owner: g.Owner, Token: g.Token, TTLMs: wire.MsCeil(g.TTL), Handle: h.id}
	if _, err := s.callOn(ctx, routeOf(h), "renew", "POST", "v1/renew", body, &ng); err != nil {
		return leasehold.Grant{}, err
	}
	g.TTL = min(g.TTL, wire.Ms(ng.TTLMs))
	return g, nil
}

// Release asks the server to end g.
func (s *Store) Release(ctx context.Context, g leasehold.Grant) error {
	if err := leasehold.CheckRelease(g); err != nil {
		return err
	}
	h := handleOf(g)
	body := wire.GrantRequest{Key: g.Key, Owner: g.Owner, Token: g.Token, Handle: h.id}
	_, err := s.callOn(ctx, routeOf(h), "release", "POST", "v1/release", body, nil)
	return err
}

// Holder asks the server who holds key.
func (s *Store) Holder(ctx context.Context, key string) (leasehold.Holder, error) {
	if err := leasehold.CheckHolder(key); err != nil {
		return leasehold.Holder{}, err
	}
	var h wire.Holder
	if err := s.call(ctx, "holder", "GET", "v1/holder?"+url.Values{"key": {key}}.Encode(), nil, &h); err != nil {
		return leasehold.Holder{}, err
	}
	return h.ToHolder(), nil
}

func (s *Store) list(ctx context.Context, prefix string) ([]leasehold.Holder, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var l wire.List
	if err := s.call(ctx, "list", "GET", "v1/list?"+url.Values{"prefix": {prefix}}.Encode(), nil, &l); err != nil {
		return nil, err
	}
	out := make([]leasehold.Holder, 0, len(l.Holders))
	for _, h := range l.Holders {
		out = append(out, h.ToHolder())
	}
	return out, nil
}

// privateOf is a grant's Private for the handle id of the server with
// index server: nil for none.
func privateOf(id string, server int) any {
	if id == "" {
		return nil
	}
	return handle{id: id, server: server}
}
