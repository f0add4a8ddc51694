package redlock

import (
	"context"
	"errors"
	"fmt"

	"github.com/leasehold-go/leasehold"
	lhredis "github.com/leasehold-go/leasehold/redis"
)

// Dial opens a store on the masters named by u, making one client per
// master with dial (an adapter's constructor). It checks every master with
// a trivial script and fails, closing what it made, unless a majority
// answers. The store owns the clients: its Close closes them.
func Dial(ctx context.Context, u URL, dial func(addr string) lhredis.Client) (*Store, error) {
	var (
		clients []lhredis.Client
		answers int
		errs    []error
	)
	for _, h := range u.Addrs {
		c := dial(h)
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
