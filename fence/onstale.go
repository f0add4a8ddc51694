package fence

import (
	"context"
	"errors"
)

// StaleFunc is told of each write a fence helper refused because its token
// was stale, for metrics and logs: [Table] and [MiddlewareOptions] call
// their OnStale field with the request's context and the refusal, on the
// caller's goroutine, before returning it. It must return quickly.
// leasehold.FenceRejections turns a lease client's Observer into one, so
// that fence rejections reach the same metrics as the leases.
type StaleFunc func(ctx context.Context, err *StaleError)

// report calls f with err's *StaleError, if err holds one and f is set.
func (f StaleFunc) report(ctx context.Context, err error) {
	if f == nil || err == nil {
		return
	}
	var stale *StaleError
	if errors.As(err, &stale) {
		f(ctx, stale)
	}
}
