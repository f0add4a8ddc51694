package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leasehold-go/leasehold"
)

// Reachable checks that s answers, with one read (Holder of a key nobody
// holds) bounded by timeout (default 5 s when zero), so that a bench can
// fail with a clear error before it sends any load.
func Reachable(ctx context.Context, s leasehold.Store, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := s.Holder(rctx, NewPrefix()+"reachable")
	switch {
	case err == nil, errors.Is(err, leasehold.ErrNotHeld):
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case rctx.Err() != nil:
		return fmt.Errorf("bench: the %s store did not answer within %s: %w", s.Info().Name, timeout, err)
	}
	return fmt.Errorf("bench: the %s store cannot be used: %w", s.Info().Name, err)
}
