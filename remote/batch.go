package remote

import (
	"context"
	"errors"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/wire"
)

// RenewMany renews gs as Renew would, up to wire.MaxBatch grants per
// request (the server renews them in one call when its backend batches).
// It returns one result per grant; err is set only when every request
// failed as a whole.
func (s *Store) RenewMany(ctx context.Context, gs []leasehold.Grant) ([]leasehold.RenewResult, error) {
	out := make([]leasehold.RenewResult, len(gs))
	var whole error
	sent := 0
	for start := 0; start < len(gs); start += wire.MaxBatch {
		chunk := gs[start:min(start+wire.MaxBatch, len(gs))]
		err := s.renewChunk(ctx, chunk, out[start:start+len(chunk)])
		if err == nil {
			sent++
			continue
		}
		whole = err
		for i := range chunk {
			out[start+i] = leasehold.RenewResult{Err: err}
		}
	}
	if sent == 0 && whole != nil {
		return nil, whole
	}
	return out, nil
}

// renewChunk renews up to wire.MaxBatch grants in one request, writing
// each result into out. Grants the checks refuse are not sent.
func (s *Store) renewChunk(ctx context.Context, gs []leasehold.Grant, out []leasehold.RenewResult) error {
	var (
		body wire.RenewManyRequest
		at   []int
	)
	for i, g := range gs {
		if err := leasehold.CheckRenew(g, s.info); err != nil {
			out[i] = leasehold.RenewResult{Err: err}
			continue
		}
		body.Grants = append(body.Grants, wire.GrantRequest{Key: g.Key, Owner: g.Owner, Token: g.Token, TTLMs: wire.MsCeil(g.TTL), Handle: handleOf(g)})
		at = append(at, i)
	}
	if len(at) == 0 {
		return nil
	}
	var resp wire.RenewManyResponse
	if err := s.call(ctx, "renew", "POST", "v1/renew-many", body, &resp); err != nil {
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
