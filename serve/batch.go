package serve

import (
	"context"
	"fmt"
	"net/http"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/wire"
)

// renewMany renews up to wire.MaxBatch grants in one request, each checked
// and authorized as POST /v1/renew would, and in one call to the backend
// when it is a leasehold.BatchRenewer. Each grant gets its own result; the
// answer is 200 unless the request itself is refused.
func (s *Server) renewMany() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var body wire.RenewManyRequest
		if err := s.decodeUpTo(w, r, &body, wire.MaxBatchBytes); err != nil {
			writeFailure(w, err, "")
			return
		}
		if n := len(body.Grants); n == 0 || n > wire.MaxBatch {
			writeFailure(w, badRequest("grants: send 1 to %d grants, not %d", wire.MaxBatch, n), "")
			return
		}
		results := make([]wire.RenewManyResult, len(body.Grants))
		var (
			gs      []leasehold.Grant
			at      []int // the index in body.Grants of each of gs
			handles []string
		)
		for i, gr := range body.Grants {
			g, handle, err := s.resolve(r, gr, true)
			if err != nil {
				results[i] = failed(err, gr.Owner)
				continue
			}
			gs, at, handles = append(gs, g), append(at, i), append(handles, handle)
		}
		for j, res := range s.renewAll(r.Context(), gs) {
			s.renewed(handles[j], res.Grant, res.Err)
			if res.Err != nil {
				results[at[j]] = failed(res.Err, gs[j].Owner)
				continue
			}
			g := res.Grant
			results[at[j]] = wire.RenewManyResult{Grant: &wire.Grant{Key: g.Key, Owner: g.Owner, Label: g.Label,
				Token: g.Token, TTLMs: wire.MsFloor(g.TTL), Handle: handles[j]}}
		}
		writeJSON(w, http.StatusOK, wire.RenewManyResponse{Results: results})
	}
}

// renewAll renews gs, in one call when the backend batches: one result
// per grant, in order.
func (s *Server) renewAll(ctx context.Context, gs []leasehold.Grant) []leasehold.RenewResult {
	out := make([]leasehold.RenewResult, len(gs))
	if len(gs) == 0 {
		return out
	}
	if br, ok := s.store.(leasehold.BatchRenewer); ok {
		res, err := br.RenewMany(ctx, gs)
		if err == nil && len(res) != len(gs) {
			err = &leasehold.StoreError{Store: s.info.Name, Op: "renew",
				Err: fmt.Errorf("the store renewed %d grants of %d", len(res), len(gs))}
		}
		if err == nil {
			return res
		}
		for i := range out {
			out[i].Err = err
		}
		return out
	}
	for i, g := range gs {
		out[i].Grant, out[i].Err = s.store.Renew(ctx, g)
	}
	return out
}

// failed is the result of a grant whose renewal was refused or failed.
func failed(err error, owner string) wire.RenewManyResult {
	status, body := failureOf(err, owner)
	return wire.RenewManyResult{Status: status, Error: &body}
}
