package remote

import (
	"context"
	"errors"
	"slices"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/wire"
)

// RenewMany renews gs as Renew would, up to wire.MaxBatch grants per
// request (the server renews them in one call when its backend batches):
// the grants a server keeps in requests to that server, the others in
// requests to any (see the package doc). It returns one result per grant;
// err is set only when every request failed as a whole.
func (s *Store) RenewMany(ctx context.Context, gs []leasehold.Grant) ([]leasehold.RenewResult, error) {
	out := make([]leasehold.RenewResult, len(gs))
	var whole error
	sent := 0
	routes, groups := byRoute(gs)
	for r, group := range groups {
		for start := 0; start < len(group); start += wire.MaxBatch {
			at := group[start:min(start+wire.MaxBatch, len(group))]
			chunk, res := make([]leasehold.Grant, len(at)), make([]leasehold.RenewResult, len(at))
			for j, i := range at {
				chunk[j] = gs[i]
			}
			err := s.renewChunk(ctx, routes[r], chunk, res)
			if err == nil {
				sent++
			} else {
				whole = err
			}
			for j, i := range at {
				if out[i] = res[j]; err != nil {
					out[i] = leasehold.RenewResult{Err: err}
				}
			}
		}
	}
	if sent == 0 && whole != nil {
		return nil, whole
	}
	return out, nil
}

// byRoute groups the indexes of gs by the route of their renewal: the
// grants each server keeps, and the others.
func byRoute(gs []leasehold.Grant) ([]route, [][]int) {
	var (
		routes []route
		groups [][]int
	)
	for i, g := range gs {
		rt := routeOf(handleOf(g))
		k := slices.Index(routes, rt)
		if k < 0 {
			routes, groups, k = append(routes, rt), append(groups, nil), len(routes)
		}
		groups[k] = append(groups[k], i)
	}
	return routes, groups
}

// renewChunk renews up to wire.MaxBatch grants in one request, writing
// each result into out. Grants the checks refuse are not sent.
func (s *Store) renewChunk(ctx context.Context, rt route, gs []leasehold.Grant, out []leasehold.RenewResult) error {
	var (
		body wire.RenewManyRequest
		at   []int
	)
	for i, g := range gs {
		if err := leasehold.CheckRenew(g, s.info); err != nil {
			out[i] = leasehold.RenewResult{Err: err}
			continue
		}
		body.Grants = append(body.Grants, wire.GrantRequest{Key: g.Key, Owner: g.Owner, Token: g.Token, TTLMs: wire.MsCeil(g.TTL), Handle: handleOf(g).id})
		at = append(at, i)
	}
	if len(at) == 0 {
		return nil
	}
	var resp wire.RenewManyResponse
	if _, err := s.callOn(ctx, rt, "renew", "POST", "v1/renew-many", body, &resp); err != nil {
		return err
	}
	if len(resp.Results) != len(at) {
		return s.fail("renew", errors.New("the server's renew-many answer does not have one result per grant"))
	}
	for j, res := range resp.Results {
		g := gs[at[j]]
		switch {
		case res.Grant != nil:
			g.TTL = min(g.TTL, wire.Ms(res.Grant.TTLMs))
			out[at[j]] = leasehold.RenewResult{Grant: g}
		case res.Error != nil:
			out[at[j]] = leasehold.RenewResult{Err: s.refusalOf("renew", res.Status, *res.Error)}
		default:
			out[at[j]] = leasehold.RenewResult{Err: s.fail("renew", errors.New("the server's renew-many answer has a result with neither grant nor error"))}
		}
	}
	return nil
}
