package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold"
)

// Acquire claims req.Key for req.Owner if nobody holds it, or its holder
// released it or let it expire by the host's clock. In one write transaction
// it reads the key's row and, if the key is free, writes the next token with
// the new owner, label and expiry. It returns a *leasehold.HeldError when the
// key is held.
func (s *Store) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	if err := leasehold.CheckAcquire(req, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	if err := s.checkOpen(ctx, "acquire"); err != nil {
		return leasehold.Grant{}, err
	}
	var (
		token uint64
		held  *leasehold.HeldError
	)
	err := s.write(ctx, func(tx *sql.Tx, now time.Time) error {
		var (
			last    int64
			owner   sql.NullString
			label   string
			expires int64
		)
		err := tx.StmtContext(ctx, s.stmts.get).QueryRowContext(ctx, req.Key).Scan(&last, &owner, &label, &expires)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			last = 0
		case err != nil:
			return err
		default:
			if err := checkRow(rowObject(s.path, req.Key), leaseRow{token: last, owned: owner.Valid, expires: expires}, now); err != nil {
				return err
			}
			if owner.Valid && expires > now.UnixNano() {
				held = &leasehold.HeldError{Key: req.Key, Label: label, Token: uint64(last), Remaining: time.Duration(expires - now.UnixNano())}
				return held
			}
		}
		next, err := nextToken(req.Key, last)
		if err != nil {
			return err
		}
		token = uint64(next)
		_, err = tx.StmtContext(ctx, s.stmts.put).ExecContext(ctx, req.Key, next, req.Owner, req.Label, now.Add(req.TTL).UnixNano())
		return err
	})
	if held != nil {
		return leasehold.Grant{}, held
	}
	if err != nil {
		return leasehold.Grant{}, s.fail(ctx, "acquire", err)
	}
	return leasehold.Grant{Key: req.Key, Owner: req.Owner, Label: req.Label, Token: token, TTL: req.TTL}, nil
}

// Renew extends g by g.TTL from now if g.Owner and g.Token still hold g.Key.
// A lease that expired but that nobody acquired since is renewed too, with
// the same token: nobody else held the key in between, and no newer token
// exists. It returns an error wrapping leasehold.ErrNotHeld when the lease
// was released or taken.
func (s *Store) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	if err := leasehold.CheckRenew(g, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	if err := s.checkOpen(ctx, "renew"); err != nil {
		return leasehold.Grant{}, err
	}
	var n int64
	err := s.write(ctx, func(tx *sql.Tx, now time.Time) (err error) {
		n, err = renewOne(ctx, tx.StmtContext(ctx, s.stmts.renew), g, now)
		return err
	})
	if err != nil {
		return leasehold.Grant{}, s.fail(ctx, "renew", err)
	}
	if n == 0 {
		return leasehold.Grant{}, fmt.Errorf("renew %q (token %d): %w", g.Key, g.Token, leasehold.ErrNotHeld)
	}
	return g, nil
}

func renewOne(ctx context.Context, st *sql.Stmt, g leasehold.Grant, now time.Time) (int64, error) {
	if g.Token > math.MaxInt64 {
		return 0, nil // never minted
	}
	res, err := st.ExecContext(ctx, g.Key, g.Owner, int64(g.Token), now.Add(g.TTL).UnixNano())
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// RenewMany renews each grant as Renew would, in one write transaction (one
// fsync for the batch). A grant with an invalid TTL gets its own error.
func (s *Store) RenewMany(ctx context.Context, gs []leasehold.Grant) ([]leasehold.RenewResult, error) {
	if err := s.checkOpen(ctx, "renew"); err != nil {
		return nil, err
	}
	out := make([]leasehold.RenewResult, len(gs))
	if len(gs) == 0 {
		return out, nil
	}
	err := s.write(ctx, func(tx *sql.Tx, now time.Time) error {
		st := tx.StmtContext(ctx, s.stmts.renew)
		for i, g := range gs {
			out[i] = leasehold.RenewResult{}
			if err := leasehold.CheckRenew(g, s.Info()); err != nil {
				out[i].Err = err
				continue
			}
			n, err := renewOne(ctx, st, g, now)
			switch {
			case err != nil:
				return err
			case n == 0:
				out[i].Err = fmt.Errorf("renew %q (token %d): %w", g.Key, g.Token, leasehold.ErrNotHeld)
			default:
				out[i].Grant = g
			}
		}
		return nil
	})
	if err != nil {
		return nil, s.fail(ctx, "renew", err)
	}
	return out, nil
}

// Release ends g if g.Owner and g.Token still hold g.Key, and keeps the key's
// token counter. It returns an error wrapping leasehold.ErrNotHeld, and
// changes nothing, when they do not. Once a release is committed it wakes
// the key's waiters in this and other processes (see Subscribe).
func (s *Store) Release(ctx context.Context, g leasehold.Grant) error {
	if err := leasehold.CheckRelease(g); err != nil {
		return err
	}
	if err := s.checkOpen(ctx, "release"); err != nil {
		return err
	}
	var n int64
	err := s.write(ctx, func(tx *sql.Tx, _ time.Time) error {
		if g.Token > math.MaxInt64 {
			return nil // never minted
		}
		res, err := tx.StmtContext(ctx, s.stmts.release).ExecContext(ctx, g.Key, g.Owner, int64(g.Token))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return s.fail(ctx, "release", err)
	}
	if n == 0 {
		return fmt.Errorf("release %q (token %d): %w", g.Key, g.Token, leasehold.ErrNotHeld)
	}
	s.wake.released(g.Key)
	return nil
}

// Holder reports who holds key now, by the host's clock. It returns an error
// wrapping leasehold.ErrNotHeld when nobody does.
func (s *Store) Holder(ctx context.Context, key string) (leasehold.Holder, error) {
	if err := leasehold.CheckHolder(key); err != nil {
		return leasehold.Holder{}, err
	}
	if err := s.checkOpen(ctx, "holder"); err != nil {
		return leasehold.Holder{}, err
	}
	var (
		h       = leasehold.Holder{Key: key}
		token   int64
		expires int64
		now     time.Time
	)
	err := s.retry(ctx, func() error {
		now = s.now()
		return s.stmts.holder.QueryRowContext(ctx, key, now.UnixNano()).Scan(&h.Label, &token, &expires)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return leasehold.Holder{}, fmt.Errorf("holder %q: %w", key, leasehold.ErrNotHeld)
	}
	if err != nil {
		return leasehold.Holder{}, s.fail(ctx, "holder", err)
	}
	if err := checkRow(rowObject(s.path, key), leaseRow{token: token, owned: true, expires: expires}, now); err != nil {
		return leasehold.Holder{}, &leasehold.StoreError{Store: name, Op: "holder", Err: err}
	}
	h.Token = uint64(token)
	h.Remaining = time.Duration(expires - now.UnixNano())
	return h, nil
}

// List reports the current holders of keys that start with prefix, in key
// order.
func (s *Store) List(ctx context.Context, prefix string) ([]leasehold.Holder, error) {
	if err := s.checkOpen(ctx, "list"); err != nil {
		return nil, err
	}
	var hs []leasehold.Holder
	err := s.retry(ctx, func() error {
		hs = hs[:0]
		now := s.now()
		rows, err := s.stmts.list.QueryContext(ctx, prefix, now.UnixNano())
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				h              leasehold.Holder
				token, expires int64
			)
			if err := rows.Scan(&h.Key, &h.Label, &token, &expires); err != nil {
				return err
			}
			if !strings.HasPrefix(h.Key, prefix) {
				break // keys are in order: none after this one match
			}
			if err := checkRow(rowObject(s.path, h.Key), leaseRow{token: token, owned: true, expires: expires}, now); err != nil {
				return err
			}
			h.Token = uint64(token)
			h.Remaining = time.Duration(expires - now.UnixNano())
			hs = append(hs, h)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, s.fail(ctx, "list", err)
	}
	return hs, nil
}
