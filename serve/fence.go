package serve

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/wire"
)

// fenceCheck answers whether a token is still its key's current grant,
// from the store's holder read (after Chubby's CheckSequencer). It needs
// the read verb on the key.
//
// A check is a point-in-time answer, not a write guard: the lease may end,
// and another owner be granted the key, between the check and the write
// that follows it. A resource that must refuse stale writes keeps the
// highest token it has seen and refuses lower ones (fence.Table, or the
// SQL, HTTP and object-store fence helpers); the check is for reads, for
// logs, and for resources that cannot keep a fence.
func (s *Server) fenceCheck() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var body wire.FenceCheckRequest
		if err := s.decode(w, r, &body); err != nil {
			writeFailure(w, err, "")
			return
		}
		if err := s.authorize(r, VerbRead, body.Key); err != nil {
			writeFailure(w, err, "")
			return
		}
		if err := leasehold.CheckHolder(body.Key); err != nil {
			writeFailure(w, err, "")
			return
		}
		if body.Token == 0 {
			writeFailure(w, badRequest(`"token" is missing or 0; a grant's token is at least 1`), "")
			return
		}
		h, err := s.store.Holder(r.Context(), body.Key)
		switch {
		case errors.Is(err, leasehold.ErrNotHeld):
			writeJSON(w, http.StatusOK, wire.FenceCheck{})
			return
		case err != nil:
			writeFailure(w, err, "")
			return
		}
		writeJSON(w, http.StatusOK, wire.FenceCheck{Current: h.Token == body.Token,
			Token: strconv.FormatUint(h.Token, 10), Label: h.Label})
	}
}
