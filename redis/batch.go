package redis

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/redis/internal/core"
)

// RenewMany renews every grant as Renew would, in one script call per 1,000
// grants, the calls sent at once: about one round trip per renew period for
// any number of leases. On a Redis Cluster the grants are first grouped by
// hash slot (a script's keys must share one), so the calls are as many as
// the slots involved, still sent at once.
//
// It returns one result per grant, in order; err is set only when every
// grant failed for a reason other than ErrNotHeld (the server is down).
func (s *Store) RenewMany(ctx context.Context, gs []leasehold.Grant) ([]leasehold.RenewResult, error) {
	if err := s.check(ctx, "renew"); err != nil {
		return nil, err
	}
	res := make([]leasehold.RenewResult, len(gs))
	items := make([]core.RenewItem, 0, len(gs))
	pos := make([]int, 0, len(gs))
	for i, g := range gs {
		if err := leasehold.CheckRenew(g, s.Info()); err != nil {
			res[i].Err = err
			continue
		}
		items = append(items, core.RenewItem{Key: g.Key, Owner: g.Owner, Token: g.Token, TTL: core.TTLMillis(g.TTL)})
		pos = append(pos, i)
	}
	renewed, errs := s.node.RenewMany(ctx, items)
	failed := 0
	var first error
	for j, i := range pos {
		g := gs[i]
		switch {
		case errs[j] != nil:
			res[i].Err = s.fail(ctx, "renew", g.Key, errs[j])
			failed++
			if first == nil {
				first = res[i].Err
			}
		case !renewed[j]:
			res[i].Err = fmt.Errorf("renew %q: %w", g.Key, leasehold.ErrNotHeld)
		default:
			g.TTL = time.Duration(items[j].TTL) * time.Millisecond
			res[i].Grant = g
		}
	}
	if failed > 0 && failed == len(gs) {
		return res, first
	}
	return res, nil
}
