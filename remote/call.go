package remote

import (
	"bytes"
	"context"
	"encoding/json"

	"fmt"
	"io"
	"net/http"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/wire"
)

// maxAnswer bounds an answer's body (a list of many holders included).
const maxAnswer = 64 << 20

// request builds a request of path (relative to the URL of the server
// idx) with body as JSON (nil for none).
func (s *Store) request(ctx context.Context, idx int, method, path string, body any) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	u, err := s.bases[idx].Parse(path) // path is relative: under the server's URL
	if err != nil {
		return nil, err
	}
	r, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	if method == "POST" && path != "v1/acquire" {
		// Renew and release may be sent twice (a second renewal renews
		// again, a second release finds nothing held): let the transport
		// retry them on a kept-alive connection the server had closed.
		r.Header["X-Idempotency-Key"] = nil
	}
	if s.token != "" {
		r.Header.Set("Authorization", "Bearer "+s.token)
	}
	return r, nil
}

// call sends one request to any server (see send) and decodes a 2xx
// answer into out (if not nil).
func (s *Store) call(ctx context.Context, op, method, path string, body, out any) error {
	_, err := s.callOn(ctx, anyServer, op, method, path, body, out)
	return err
}

// callOn sends one request along rt and decodes a 2xx answer into out (if
// not nil); it returns the index of the server that answered. A refusal
// becomes the error the Store contract names; a failure to reach or
// understand the server a *leasehold.StoreError; the caller's context
// error is returned as is, and a closed store's as ErrClosed.
func (s *Store) callOn(ctx context.Context, rt route, op, method, path string, body, out any) (int, error) {
	if err := ctx.Err(); err != nil {
		return -1, err
	}
	if s.ctx.Err() != nil {
		return -1, s.fail(op, leasehold.ErrClosed)
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()
	resp, idx, err := s.send(rt, s.requestOn(rctx, method, path, body))
	if err != nil {
		return idx, s.ended(ctx, op, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return idx, s.ended(ctx, op, err)
	}
	if resp.StatusCode >= 300 {
		return idx, s.refusal(op, resp.StatusCode, b)
	}
	if out == nil {
		return idx, nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return idx, s.fail(op, fmt.Errorf("the server's answer (%d) is not what the API says: %w", resp.StatusCode, err))
	}
	return idx, nil
}

// ended returns the error of a request that did not get its answer: the
// caller's context's, ErrClosed if the store was closed, else err.
func (s *Store) ended(ctx context.Context, op string, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case s.ctx.Err() != nil:
		return s.fail(op, leasehold.ErrClosed)
	}
	return s.fail(op, err)
}

func (s *Store) fail(op string, err error) error {
	return &leasehold.StoreError{Store: s.info.Name, Op: op, Err: err}
}

// ServerError is a refusal of the server, with the code and message of
// its JSON answer. It matches the root sentinel its code names (ErrNotHeld
// for not_held, ErrInvalidKey for invalid_key, ...).
type ServerError struct {
	Status  int    // the HTTP status
	Code    string // the API's error code, e.g. "not_held"
	Message string
	is      error
}

func (e *ServerError) Error() string {
	return fmt.Sprintf("leasehold server: %d %s: %s", e.Status, e.Code, e.Message)
}

// Unwrap returns the sentinel the code names, if any.
func (e *ServerError) Unwrap() error { return e.is }

// refusal maps an error answer to the error the Store contract names.
func (s *Store) refusal(op string, status int, body []byte) error {
	var we wire.Error
	if err := json.Unmarshal(body, &we); err != nil || we.Error.Code == "" {
		return s.fail(op, fmt.Errorf("the server answered %d without a JSON error: %.200q", status, body))
	}
	return s.refusalOf(op, status, we.Error)
}

// refusalOf maps the error body e, answered with status, to the error the
// Store contract names.
func (s *Store) refusalOf(op string, status int, e wire.ErrorBody) error {
	se := &ServerError{Status: status, Code: e.Code, Message: e.Message}
	if e.Code == wire.CodeUnauthorized && s.token != "" && s.from != "" {
		se.Message += " (the token read from " + s.from + ")"
	}
	if e.Code == wire.CodeHeld {
		h := leasehold.HeldError{}
		if e.Holder != nil {
			h = leasehold.HeldError{Key: e.Holder.Key, Label: e.Holder.Label, Token: e.Holder.Token, Remaining: wire.Ms(e.Holder.RemainingMs)}
		}
		return &h
	}
	for _, r := range wire.Refusals() {
		if r.Code == e.Code {
			se.is = r.Err
			if !r.StoreFailure {
				return se
			}
		}
	}
	return s.fail(op, se)
}
