package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold-go/leasehold"
)

// advisoryBatchParallel bounds the concurrent renewals of an advisory batch.
const advisoryBatchParallel = 8

// RenewMany renews each grant as Renew would. In lease-row mode it is one
// UPDATE ... FROM unnest($keys, $owners, $tokens, $ttls) statement for the
// whole batch, whatever its size. In advisory mode each lease lives on its
// own session, so each is renewed on it (up to 8 at a time).
func (s *Store) RenewMany(ctx context.Context, gs []leasehold.Grant) ([]leasehold.RenewResult, error) {
	if err := s.check(ctx, "renew"); err != nil {
		return nil, err
	}
	res := make([]leasehold.RenewResult, len(gs))
	if s.opts.Mode == Advisory {
		var wg sync.WaitGroup
		sem := make(chan struct{}, advisoryBatchParallel)
		for i, g := range gs {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				ng, err := s.Renew(ctx, g)
				res[i] = leasehold.RenewResult{Grant: ng, Err: err}
			}()
		}
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return res, nil
	}

	type ident struct {
		key, owner string
		token      int64
	}
	var (
		keys, owners []string
		tokens, ttls []int64
	)
	for i, g := range gs {
		if err := leasehold.ValidateTTL(g.TTL, s.Info()); err != nil {
			res[i].Err = err
			continue
		}
		keys = append(keys, g.Key)
		owners = append(owners, g.Owner)
		tokens = append(tokens, int64(g.Token))
		ttls = append(ttls, ttlMicros(g.TTL))
	}
	renewed := make(map[ident]bool, len(keys))
	if len(keys) > 0 {
		rs, err := s.q.query(ctx, s.st.leaseRenewMany, keys, owners, tokens, ttls)
		if err != nil {
			return nil, s.fail(ctx, "renew", err)
		}
		for rs.Next() {
			var id ident
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
	}
	for i, g := range gs {
		if res[i].Err != nil {
			continue
		}
		if renewed[ident{g.Key, g.Owner, int64(g.Token)}] {
			g.TTL = time.Duration(ttlMicros(g.TTL)) * time.Microsecond
			res[i].Grant = g
		} else {
			res[i].Err = fmt.Errorf("renew %q (token %d): %w", g.Key, g.Token, leasehold.ErrNotHeld)
		}
	}
	return res, nil
}

func isNoRows(err error) bool {
	return errors.Is(err, pgx.ErrNoRows) || errors.Is(err, sql.ErrNoRows)
}
