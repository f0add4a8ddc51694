package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold-go/leasehold"
)

// RenewMany renews each grant as Renew would, in one
// UPDATE ... FROM unnest($keys, $owners, $tokens, $ttls) statement for the
// whole batch, whatever its size. A grant that fails its check gets its own
// error and is left out of the statement.
func (s *LeaseStore) RenewMany(ctx context.Context, gs []leasehold.Grant) ([]leasehold.RenewResult, error) {
	if err := s.check(ctx, "renew"); err != nil {
		return nil, err
	}
	res := make([]leasehold.RenewResult, len(gs))
	var (
		keys, owners []string
		tokens, ttls []int64
	)
	for i, g := range gs {
		if err := leasehold.CheckRenew(g, s.Info()); err != nil {
			res[i].Err = err
			continue
		}
		keys = append(keys, g.Key)
		owners = append(owners, g.Owner)
		tokens = append(tokens, int64(g.Token))
		ttls = append(ttls, ttlMicros(g.TTL))
	}
	renewed, err := s.renewMany(ctx, keys, owners, tokens, ttls)
	if err != nil {
		return nil, err
	}
	for i, g := range gs {
		if res[i].Err != nil {
			continue
		}
		if renewed[grantID{g.Key, g.Owner, int64(g.Token)}] {
			g.TTL = time.Duration(ttlMicros(g.TTL)) * time.Microsecond
			res[i].Grant = g
		} else {
			res[i].Err = fmt.Errorf("renew %q (token %d): %w", g.Key, g.Token, leasehold.ErrNotHeld)
		}
	}
	return res, nil
}

// grantID names a grant in a batch's answer.
type grantID struct {
	key, owner string
	token      int64
}

// renewMany runs the batch statement and reports the grants it renewed.
func (s *LeaseStore) renewMany(ctx context.Context, keys, owners []string, tokens, ttls []int64) (map[grantID]bool, error) {
	renewed := make(map[grantID]bool, len(keys))
	if len(keys) == 0 {
		return renewed, nil
	}
	rs, err := s.q.query(ctx, s.st.renewMany, keys, owners, tokens, ttls)
	if err != nil {
		return nil, s.fail(ctx, "renew", err)
	}
	for rs.Next() {
		var id grantID
		if err := rs.Scan(&id.key, &id.owner, &id.token); err != nil {
			rs.Close()
			return nil, s.fail(ctx, "renew", err)
		}
		renewed[id] = true
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return nil, s.fail(ctx, "renew", err)
	}
	return renewed, nil
}
