package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/leasehold-go/leasehold"
)

// Lease-row mode: one row per key, claimed by a single upsert whose WHERE
// clause judges expiry by the server's clock.

func (s *Store) leaseAcquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	us := ttlMicros(req.TTL)
	var (
		acquired  bool
		token     int64
		label     string
		remaining int64
	)
	err := s.q.queryRow(ctx, s.st.leaseAcquire, req.Key, req.Owner, req.Label, us).Scan(&acquired, &token, &label, &remaining)
	if err != nil {
		if isNoRows(err) {
			// The upsert found the row held, but the row version this
			// statement's snapshot sees is older than the one it
			// conflicted with: held, by someone we cannot name.
			return leasehold.Grant{}, &leasehold.HeldError{Key: req.Key}
		}
		if ambiguous(err) {
			s.abandon(ctx, req)
		}
		return leasehold.Grant{}, s.fail(ctx, "acquire", err)
	}
	if !acquired {
		he := &leasehold.HeldError{Key: req.Key}
		if remaining > 0 {
			he.Label, he.Token, he.Remaining = label, uint64(token), time.Duration(remaining)*time.Microsecond
		}
		return leasehold.Grant{}, he
	}
	return leasehold.Grant{
		Key:   req.Key,
		Owner: req.Owner,
		Label: req.Label,
		Token: uint64(token),
		TTL:   time.Duration(us) * time.Microsecond,
	}, nil
}

// abandonTimeout bounds the clean-up after an acquire that may have been
// applied unseen.
const abandonTimeout = time.Second

// ambiguous reports whether a failed statement may still have been applied:
// the server did not answer with an error (which rolls the statement back)
// and pgx cannot tell that nothing was sent.
func ambiguous(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) || isNoRows(err) {
		return false
	}
	return !pgconn.SafeToRetry(err)
}

// abandon clears a lease that an acquire whose answer was lost (the
// caller's context ended, the connection broke) may have taken for
// req.Owner, so that the key does not stay blocked until the TTL.
//
// It must never clear a grant made by a later acquire, even one with the
// same owner id: the client makes owner ids unique per attempt, but a
// caller of the Store may retry with the same owner (a loop of one-shot
// acquires), and a clean-up statement can reach the server late (it timed
// out here but was still in flight, or queued behind a lock), after a later
// acquire of the same owner won the key: a statement that matched the
// owner alone would then clear that later grant while its holder believes
// it holds the key, and let a third party in. The token of the lost grant
// is not known, so the clean-up takes two statements:
//
//  1. read the token of the grant req.Owner holds on the key, if any (FOR
//     UPDATE: it waits for a statement holding the row lock, such as the
//     lost acquire still running, and reads what it committed);
//  2. only if that read was answered, release exactly that owner and token
//     (the release statement, which also wakes waiters).
//
// However late either statement reaches the server, it cannot touch a
// later grant: the read changes nothing, and the release names a token
// that existed when the read answered, before this call returned and so
// before any later acquire of this caller was sent; a later grant of the
// key always has a greater token. What the clean-up may miss (the read
// timed out, or the lost acquire reached the server after the read) is
// left to the TTL: a blocked key, never a second holder. One owner id used
// by two acquires at the same time remains the caller's error: each one's
// clean-up may clear the other's grant.
func (s *Store) abandon(ctx context.Context, req leasehold.AcquireRequest) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abandonTimeout)
	defer cancel()
	var token int64
	if err := s.q.queryRow(cctx, s.st.leaseAbandon, req.Key, req.Owner).Scan(&token); err != nil {
		return // nothing held by req.Owner, or no answer: left to the TTL
	}
	_ = s.leaseRelease(cctx, leasehold.Grant{Key: req.Key, Owner: req.Owner, Token: uint64(token)})
}

func (s *Store) leaseRenew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	us := ttlMicros(g.TTL)
	n, err := s.q.exec(ctx, s.st.leaseRenew, g.Key, g.Owner, int64(g.Token), us)
	if err != nil {
		return leasehold.Grant{}, s.fail(ctx, "renew", err)
	}
	if n == 0 {
		return leasehold.Grant{}, fmt.Errorf("renew %q (token %d): %w", g.Key, g.Token, leasehold.ErrNotHeld)
	}
	g.TTL = time.Duration(us) * time.Microsecond
	return g, nil
}

func (s *Store) leaseRelease(ctx context.Context, g leasehold.Grant) error {
	var notified bool
	hi, lo := flagHalves(s.LockID(g.Key))
	err := s.q.queryRow(ctx, s.st.leaseRelease, g.Key, g.Owner, int64(g.Token), hi, lo, s.channel).Scan(&notified)
	if isNoRows(err) {
		return fmt.Errorf("release %q (token %d): %w", g.Key, g.Token, leasehold.ErrNotHeld)
	}
	if err != nil {
		return s.fail(ctx, "release", err)
	}
	return nil
}

func (s *Store) leaseHolder(ctx context.Context, key string) (leasehold.Holder, error) {
	var (
		label     string
		token     int64
		remaining int64
	)
	err := s.q.queryRow(ctx, s.st.leaseHolder, key).Scan(&label, &token, &remaining)
	if err != nil {
		if isNoRows(err) {
			return leasehold.Holder{}, fmt.Errorf("holder %q: %w", key, leasehold.ErrNotHeld)
		}
		return leasehold.Holder{}, s.fail(ctx, "holder", err)
	}
	return leasehold.Holder{Key: key, Label: label, Token: uint64(token), Remaining: time.Duration(remaining) * time.Microsecond}, nil
}

func (s *Store) leaseList(ctx context.Context, prefix string) ([]leasehold.Holder, error) {
	rs, err := s.q.query(ctx, s.st.leaseList, prefix)
	if err != nil {
		return nil, s.fail(ctx, "list", err)
	}
	defer rs.Close()
	var hs []leasehold.Holder
	for rs.Next() {
		var (
			h         leasehold.Holder
			token     int64
			remaining int64
		)
		if err := rs.Scan(&h.Key, &h.Label, &token, &remaining); err != nil {
			return nil, s.fail(ctx, "list", err)
		}
		h.Token, h.Remaining = uint64(token), time.Duration(remaining)*time.Microsecond
		hs = append(hs, h)
	}
	if err := rs.Err(); err != nil {
		return nil, s.fail(ctx, "list", err)
	}
	return hs, nil
}
