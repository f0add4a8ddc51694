package redlock

import (
	"context"
	"errors"
	"fmt"

	"github.com/leasehold-go/leasehold"
	lhredis "github.com/leasehold-go/leasehold/redis"
)

// OpenURL opens a store on the masters named by rawURL (see ParseURL),
// making one client per master with dial, an adapter's constructor given
// the master's host:port and the URL's credentials and database. dial does
// no I/O. OpenURL then checks every master with a trivial script and fails,
// closing what it made, unless a majority answers. The store owns the
// clients: its Close closes them. Errors are *leasehold.StoreError.
//
// The adapters' OpenRedlockURL functions call it with their constructor;
// use theirs.
func OpenURL(ctx context.Context, rawURL string, dial func(addr string, u URL) lhredis.Client) (leasehold.Store, error) {
	u, err := ParseURL(rawURL)
	if err != nil {
		return nil, &leasehold.StoreError{Store: Name, Op: "open", Err: err}
	}
	var (
		clients []lhredis.Client
		answers int
		errs    []error
	)
	for _, h := range u.Addrs {
		c := dial(h, u)
		clients = append(clients, c)
		if _, err := c.Eval(ctx, "return 1", nil, nil); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", h, err))
			continue
		}
		answers++
	}
	closeAll := func() {
		for _, c := range clients {
			_ = c.Close()
		}
	}
	if need := len(u.Addrs)/2 + 1; answers < need {
		closeAll()
		return nil, &leasehold.StoreError{Store: Name, Op: "open", Err: fmt.Errorf(
			"%d of %d masters answered, need %d: %w", answers, len(u.Addrs), need, errors.Join(errs...))}
	}
	s, err := New(clients, &Options{Prefix: u.Prefix, CloseClients: true})
	if err != nil {
		closeAll()
		return nil, err
	}
	return s, nil
}

// NewAdapted returns a store over clients of a client library, adapting
// each with adapt (an adapter's NewClient). It is New for the adapters'
// NewRedlock functions; the store closes the clients only when
// opts.CloseClients is set.
func NewAdapted[C any](clients []C, adapt func(C) (lhredis.Client, error), opts *Options) (*Store, error) {
	cs := make([]lhredis.Client, 0, len(clients))
	for _, c := range clients {
		a, err := adapt(c)
		if err != nil {
			return nil, &leasehold.StoreError{Store: Name, Op: "open", Err: err}
		}
		cs = append(cs, a)
	}
	return New(cs, opts)
}
