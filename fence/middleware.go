package fence

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// MiddlewareOptions configures [MiddlewareOptions.Wrap]. The zero value
// checks every request against r.URL.Path, refuses requests without a
// token, runs the handlers of one resource one at a time, and writes
// plain-text errors.
//
// # What the default protects
//
// By default the middleware holds a lock per resource from before the
// token check until the handler returns. A request is admitted only if its
// token is at least the highest admitted for the resource, and no other
// request of the resource is checked while its handler runs. So once a
// request with token t has been admitted, a request with a lower token can
// never write afterwards: it either finished its handler before t was
// checked, or it is checked after t's handler and refused with 409. This
// holds if the handler's write is done (committed, flushed) when the
// handler returns; a handler that hands the write to a goroutine or a queue
// and returns early is not protected. The locks belong to the handler that
// Wrap returns: two handlers wrapped separately over one guard do not
// exclude each other, so route every write to a resource through one
// wrapped handler.
//
// The token is recorded by the [Guard] when the request is admitted, before
// the handler runs, and stays recorded if the handler then fails. That is
// on purpose: a token t proves that grant t exists, so every lower token
// belongs to a lease that has ended, and refusing it is right whether or
// not t's write succeeded.
//
// The cost is that the handlers of one resource never overlap, and a
// request queued behind a slow one waits (a request whose context ends
// while it waits is answered 503, without reaching the guard). Handlers of
// different resources run concurrently.
//
// # One process only
//
// The lock lives in this process. A service with several replicas behind a
// load balancer, each with its own middleware, is not protected by it:
// replica A can admit token 5 and stall while replica B admits token 6 and
// writes, and then A writes. Such a service needs the guard in the shared
// database, in the same transaction as the write: [Table.Check] on the
// handler's *sql.Tx (or [Table.Update]) with the token from [TokenFrom].
// The middleware can still parse and carry the token (and refuse tokens
// older than this replica has seen); the database makes the decision that
// counts. The sqltest module has a runnable example on SQLite
// (Example_replicas in sqltest/example_replicas_test.go).
type MiddlewareOptions struct {
	// Resource names the resource a request writes to; the guard keeps one
	// highest token per name, and requests of one name are serialised.
	// Every request that writes the same data must map to the same name.
	// nil means r.URL.Path, as received (not cleaned: mount the middleware
	// behind an http.ServeMux, which redirects unclean paths, or give a
	// Resource that names the data itself).
	Resource func(r *http.Request) string

	// AllowMissing lets requests without a [Header] through unchecked and
	// unserialised, with no token in their context. By default they are
	// refused with 400. A header that is present but malformed is always
	// refused.
	AllowMissing bool

	// UnsafeConcurrent drops the per-resource lock: the token is checked
	// and the handler is then called with nothing held. A stale holder
	// admitted a moment before a newer one can then finish its write after
	// the newer holder's, and the write is lost. Set it only if the handler
	// fences its own write atomically (for example with [Table.Update],
	// or [Table.Check] in the write's transaction, using the token from
	// [TokenFrom]); the middleware then only refuses tokens that are
	// already known to be stale, early.
	UnsafeConcurrent bool

	// Serialize has no effect: serialising each resource's check and
	// handler is now the default, and UnsafeConcurrent turns it off.
	//
	// Deprecated: remove it; the default is what it asked for.
	Serialize bool

	// Error writes the response for a refused request. nil writes a
	// plain-text body with the status given by [StatusCode]. The body of a
	// 500 does not include the guard's error, which may hold internal
	// details.
	Error func(w http.ResponseWriter, r *http.Request, err error)

	// OnStale, if set, is told of every request refused because the guard
	// found its token stale (for metrics: leasehold.FenceRejections).
	OnStale StaleFunc
}

// Middleware returns a handler that admits a request to next only if its
// [Header] holds a token that guard admits for the request's path, and runs
// the handlers of one path one at a time, so that a stale request can never
// write after a newer one was admitted. It is MiddlewareOptions{}.Wrap(guard,
// next).
//
// The protection is per process: a service with several replicas needs the
// guard in its shared database ([Table] inside the handler's transaction).
// See [MiddlewareOptions] for both.
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
//   - gave up waiting for the resource (the request's context ended): 503
//     Service Unavailable;
//   - any other guard error: 500 Internal Server Error.
//
// An admitted request reaches next with its token in its context
// ([TokenFrom]); unless UnsafeConcurrent is set, the resource stays locked
// until next returns. Wrap panics if guard or next is nil.
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
	if !m.opts.UnsafeConcurrent {
		unlock, err := m.locks.lock(ctx, resource)
		if err != nil {
			m.opts.Error(w, r, fmt.Errorf("fence: gave up waiting for %s: %w", resource, err))
			return
		}
		defer unlock()
	}
	if err := m.guard.Admit(ctx, resource, token); err != nil {
		m.opts.OnStale.report(ctx, err)
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
