package remote

import (
	"context"
	"errors"
	"net"
	"net/http"
)

// A store may have several servers in front of one backend (replicas):
// Open's URL and Options.Servers, tried in that order. A request goes to
// the server that last answered; on a connection error, or a 503 (its
// backend failed), the next is tried, and answers from then on. A 4xx
// answer is the answer: no other server is asked.
//
// Two requests fail over less:
//
//   - An acquire is not idempotent: it goes to another server only when
//     it never left (a connection that could not be made). When its
//     outcome is unknown (the connection broke after it was sent) it is
//     not sent again: its error is returned, as with one server, and the
//     grant it may have made ends with its TTL (the served store cleans
//     up an attempt whose answer it lost, by its owner id). After a 503 the
//     acquire is not sent again either. In both cases the next request (a
//     Client's next attempt, with a new owner id) goes to the next server.
//     A connection kept alive to a server that was killed is such a case:
//     its first acquire after the kill may fail so.
//   - A grant the server keeps under a handle (see the package doc) is
//     renewed and released through the server that made it, and only
//     that one: its backend may end a grant that the process that made it
//     does not renew, and that server, while it runs, releases a kept grant
//     its client stopped renewing through it (serve/doc.go). When that
//     server is gone, so is the grant: its renewals fail until the lease
//     is lost. A grant without a handle (a backend with PortableGrants)
//     renews through any server.

// route says where a request may go.
type route struct {
	pinned int  // the only server to ask; -1 for any
	once   bool // not idempotent: to another server only if not sent
}

// anyServer is the route of an idempotent request.
var anyServer = route{pinned: -1}

// send builds a request for a server (by its index) with build and sends
// it along rt; it returns the answer and the index of the server that gave
// it. Its error is the transport's, from the last server tried.
func (s *Store) send(rt route, build func(server int) (*http.Request, error)) (*http.Response, int, error) {
	n := len(s.bases)
	first := int(s.cur.Load())
	if rt.pinned >= 0 {
		first, n = rt.pinned, 1
	}
	var last error
	for i := range n {
		idx := (first + i) % len(s.bases)
		r, err := build(idx)
		if err != nil {
			return nil, idx, err
		}
		resp, err := s.hc.Do(r)
		switch {
		case err != nil && r.Context().Err() != nil:
			return nil, idx, err
		case err != nil && rt.once && !notSent(err):
			s.next(idx) // the outcome is unknown: not sent again
			return nil, idx, err
		case err != nil:
			last = err
			s.next(idx)
			continue
		case resp.StatusCode == http.StatusServiceUnavailable && !rt.once && i < n-1:
			resp.Body.Close()
			s.next(idx)
			continue
		case resp.StatusCode == http.StatusServiceUnavailable:
			s.next(idx)
		}
		return resp, idx, nil
	}
	return nil, -1, last
}

// next makes the server after idx the first to ask, unless another
// request has moved on already.
func (s *Store) next(idx int) {
	s.cur.CompareAndSwap(int32(idx), int32((idx+1)%len(s.bases)))
}

// notSent reports whether a request failed before any of it was sent: its
// connection could not be made.
func notSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// routeOf returns the route of a renewal or release of g, pinned to the
// server that keeps it, if one does.
func routeOf(g handle) route {
	if g.id == "" {
		return anyServer
	}
	return route{pinned: g.server}
}

// requestOn returns the request of path on the server idx, for send.
func (s *Store) requestOn(ctx context.Context, method, path string, body any) func(int) (*http.Request, error) {
	return func(idx int) (*http.Request, error) { return s.request(ctx, idx, method, path, body) }
}
