package fence

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// MiddlewareOptions configures [MiddlewareOptions.Wrap]. The zero value
// checks every request against r.URL.Path, refuses requests without a
// token, does not serialize handlers and writes plain-text errors.
type MiddlewareOptions struct {
	// Resource names the resource a request writes to; the guard keeps one
	// highest token per name. nil means r.URL.Path.
	Resource func(r *http.Request) string

	// AllowMissing lets requests without a [Header] through unchecked, with
	// no token in their context. By default they are refused with 400.
	// A header that is present but malformed is always refused.
	AllowMissing bool

	// Serialize holds a lock per resource from the admission of a request
	// until its handler returns, so that the handlers of one resource run
	// one at a time in token order. Without it, the check and the handler's
	// write are two steps: a stale holder admitted a moment before a newer
	// one can still finish its write after the newer holder's. Either set
	// Serialize, or have the handler fence its write itself (for example
	// with [Table.Update] using the token from [TokenFrom]). A request that
	// gives up while waiting for the lock is answered 503. Requests let
	// through without a token by AllowMissing are not serialized.
	Serialize bool

	// Error writes the response for a refused request. nil writes a
	// plain-text body with the status given by [StatusCode]. The body of a
	// 500 does not include the guard's error, which may hold internal
	// details.
	Error func(w http.ResponseWriter, r *http.Request, err error)
}

// Middleware returns a handler that admits a request to next only if its
// [Header] holds a token that guard admits for the request's path. It is
// MiddlewareOptions{}.Wrap(guard, next): see [MiddlewareOptions] for the
// defaults and for why a handler's own write should be fenced too.
func Middleware(guard Guard, next http.Handler) http.Handler {
	return MiddlewareOptions{}.Wrap(guard, next)
}

// Wrap returns a handler that checks each request's fencing token before
// passing it to next:
//
//   - no [Header]: 400 Bad Request, unless AllowMissing is set;
//   - a malformed token, or more than one header: 400 Bad Request;
//   - a token guard refuses as stale: 409 Conflict, naming the token and,
//     if known, the highest token seen;
//   - any other guard error: 500 Internal Server Error.
//
// An admitted request reaches next with its token in its context
// ([TokenFrom]). Wrap panics if guard or next is nil.
func (o MiddlewareOptions) Wrap(guard Guard, next http.Handler) http.Handler {
	if guard == nil {
		panic("fence: Middleware needs a Guard")
	}
	if next == nil {
		panic("fence: Middleware needs a next handler")
	}
	m := &middleware{opts: o, guard: guard, next: next}
	if m.opts.Resource == nil {
		m.opts.Resource = func(r *http.Request) string { return r.URL.Path }
	}
	if m.opts.Error == nil {
		m.opts.Error = writeError
	}
	return m
}

type middleware struct {
	opts  MiddlewareOptions
	guard Guard
	next  http.Handler
	locks keyedLock
}

func (m *middleware) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token, err := RequestToken(r)
	if errors.Is(err, ErrMissingToken) && m.opts.AllowMissing {
		m.next.ServeHTTP(w, r)
		return
	}
	if err != nil {
		m.opts.Error(w, r, err)
		return
	}
	resource := m.opts.Resource(r)
	ctx := r.Context()
	if m.opts.Serialize {
		unlock, err := m.locks.lock(ctx, resource)
		if err != nil {
			m.opts.Error(w, r, fmt.Errorf("fence: gave up waiting for %s: %w", resource, err))
			return
		}
		defer unlock()
	}
	if err := m.guard.Admit(ctx, resource, token); err != nil {
		m.opts.Error(w, r, err)
		return
	}
	m.next.ServeHTTP(w, r.WithContext(WithToken(ctx, token)))
}

// RequestToken returns the fencing token of an incoming request. It returns
// an error matching [ErrMissingToken] if r has no [Header], and one matching
// [ErrMalformedToken] if the header is malformed or appears more than once.
func RequestToken(r *http.Request) (uint64, error) {
	values := r.Header.Values(Header)
	switch len(values) {
	case 0:
		return 0, fmt.Errorf("%w: the request has no %s header", ErrMissingToken, Header)
	case 1:
		return ParseToken(values[0])
	default:
		return 0, fmt.Errorf("%w: the request has %d %s headers", ErrMalformedToken, len(values), Header)
	}
}

// StatusCode returns the HTTP status for an error from this package: 400 Bad
// Request for [ErrMissingToken] and [ErrMalformedToken], 409 Conflict for
// [ErrStale], 503 Service Unavailable for a cancelled or timed-out context,
// and 500 Internal Server Error for anything else. It returns 200 for nil.
func StatusCode(err error) int {
	switch {
	case err == nil:
		return http.StatusOK
	case errors.Is(err, ErrMissingToken), errors.Is(err, ErrMalformedToken):
		return http.StatusBadRequest
	case errors.Is(err, ErrStale):
		return http.StatusConflict
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// writeError is the default MiddlewareOptions.Error.
func writeError(w http.ResponseWriter, _ *http.Request, err error) {
	code := StatusCode(err)
	msg := err.Error()
	if code == http.StatusInternalServerError {
		msg = "fence: could not check the fencing token"
	}
	http.Error(w, msg, code)
}
