package leasehold

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// A late grant is a "you have the lock" that reached the client at or after
// the holder's deadline (the attempt's send time plus the hold time of its
// TTL): a reply slowed by a loaded machine or store, with a short TTL. The
// grant may already have expired in the store and gone to someone else, so
// it is never handed to the caller: it is released (the store's Release is
// checked against the grant's owner and token, so it cannot end a later
// grant). A waiting acquire then waits on, as after a held key (a later
// grant carries a greater token); a single attempt returns the *LostError.

// errLateGrant is the reason of a late grant's *LostError.
var errLateGrant = fmt.Errorf("%w: the grant arrived after the holder's deadline", ErrExpired)

// holdDeadline is the holder's deadline of grant g, whose acquire for ttl
// was sent at sent: a store may grant less than asked (Redlock's validity
// time), and the shorter TTL counts.
func (c *Client) holdDeadline(g Grant, sent time.Time, ttl time.Duration) time.Time {
	hold := ttl
	if g.TTL > 0 && g.TTL < hold {
		hold = g.TTL
	}
	return sent.Add(c.opts.HoldFor(hold))
}

// dropLate releases g if it is a late grant of an attempt sent at sent for
// ttl, and then returns its *LostError (wrapping errLateGrant); it returns
// nil for a grant that arrived in time.
func (c *Client) dropLate(ctx context.Context, g Grant, sent time.Time, ttl time.Duration) error {
	if c.opts.Clock.Now().Before(c.holdDeadline(g, sent, ttl)) {
		return nil
	}
	rctx, cancel := context.WithTimeout(detach(ctx), c.opts.ReleaseTimeout)
	defer cancel()
	_ = c.store.Release(rctx, g)
	return &LostError{Key: g.Key, Token: g.Token, Reason: errLateGrant}
}

// isLate reports whether err is a late grant's *LostError.
func isLate(err error) bool { return errors.Is(err, errLateGrant) }
