package remote

import (
	"context"
	"strconv"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/wire"
)

// CheckFence asks the server whether token is still key's current grant
// (POST /v1/fence/check, after Chubby's CheckSequencer), and returns the
// current grant's token (0 when nobody holds key).
//
// The answer is a point in time, not a write guard: the lease may end,
// and another owner be granted the key, between the check and the write
// that follows it. A resource that must refuse stale writes keeps the
// highest token it has seen and refuses lower ones (fence.Table, or the
// SQL, HTTP and object-store fence helpers). The store value Open returns
// has this method too: reach it through an interface, e.g.
//
//	fc, ok := st.(interface {
//		CheckFence(ctx context.Context, key string, token uint64) (bool, uint64, error)
//	})
func (s *Store) CheckFence(ctx context.Context, key string, token uint64) (current bool, currentToken uint64, err error) {
	if err := leasehold.CheckHolder(key); err != nil {
		return false, 0, err
	}
	var out wire.FenceCheck
	body := wire.FenceCheckRequest{Key: key, Token: token}
	if err := s.call(ctx, "fence check", "POST", "v1/fence/check", body, &out); err != nil {
		return false, 0, err
	}
	if out.Token != "" {
		if currentToken, err = strconv.ParseUint(out.Token, 10, 64); err != nil {
			return false, 0, s.fail("fence check", err)
		}
	}
	return out.Current, currentToken, nil
}
