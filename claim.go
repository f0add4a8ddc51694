package leasehold

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrNotPortable: the store keeps a grant in the process that acquired it
// (Info.PortableGrants is false), so a grant that must outlive the process,
// or be renewed or released from another one, cannot be had from it.
var ErrNotPortable = errors.New("leasehold: grants on this store do not outlive the process")

// Claim acquires key as Acquire does (the same checks, the same waiting as
// opts.Wait says, a fresh owner id for every store attempt) but returns the
// store's Grant instead of a Lease: nothing renews it and nothing releases
// it. The grant lasts until its TTL ends by the store's clock, or until
// someone renews or releases it through the Store with its key, owner and
// token; the caller's deadline for acting on it is the time Claim was
// called plus HoldFor(TTL), since the grant's send time is not returned.
//
// Claim is for tools whose grant must outlive the calling process, such as
// the CLI's one-shot acquire. It refuses a store whose grants live in the
// process (Info.PortableGrants false) with an error wrapping ErrNotPortable,
// before contacting it.
func (c *Client) Claim(ctx context.Context, key string, opts AcquireOptions) (Grant, error) {
	if !c.info.PortableGrants {
		return Grant{}, fmt.Errorf("%w: the %s store keeps a grant in the process that acquired it", ErrNotPortable, c.info.Name)
	}
	var called time.Time
	if c.opts.Observer != nil {
		called = c.opts.Clock.Now()
	}
	attempts, entered := 0, false
	_, g, sent, err := c.grant(ctx, key, opts, &attempts, &entered)
	if entered {
		c.acquiring.Done()
	}
	c.observeAcquire(ctx, key, acquired{token: g.Token, called: called, sent: sent, attempts: attempts, claimed: true}, err)
	return g, err
}
