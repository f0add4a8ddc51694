package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/leasehold-go/leasehold"
)

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
func (s *LeaseStore) abandon(ctx context.Context, req leasehold.AcquireRequest) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abandonTimeout)
	defer cancel()
	var token int64
	if err := s.q.queryRow(cctx, s.st.abandon, req.Key, req.Owner).Scan(&token); err != nil {
		return // nothing held by req.Owner, or no answer: left to the TTL
	}
	_ = s.release(cctx, leasehold.Grant{Key: req.Key, Owner: req.Owner, Token: uint64(token)})
}
