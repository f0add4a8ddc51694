package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/wire"
)

// requestError is a refusal of the request itself, with its status.
type requestError struct {
	status int
	code   string
	msg    string
}

func (e *requestError) Error() string { return e.msg }

func badRequest(format string, args ...any) *requestError {
	return &requestError{http.StatusBadRequest, wire.CodeBadRequest, fmt.Sprintf(format, args...)}
}

// decode reads r's JSON body into v: at most MaxBodyBytes, one object, no
// unknown fields, within Options.BodyTimeout (a client that sends its body slowly
// does not hold the server). The error is a *requestError naming the
// problem.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) error {
	return s.decodeUpTo(w, r, v, MaxBodyBytes)
}

// decodeUpTo is decode with a body of at most limit bytes.
func (s *Server) decodeUpTo(w http.ResponseWriter, r *http.Request, v any, limit int64) error {
	rc := http.NewResponseController(w)
	timed := rc.SetReadDeadline(time.Now().Add(s.opts.BodyTimeout)) == nil
	mw := w
	if rec, ok := w.(*recorder); ok {
		mw = rec.ResponseWriter // net/http's own, which closes the connection after a 413
	}
	err := decodeFrom(http.MaxBytesReader(mw, r.Body, limit), v)
	var re *requestError
	switch {
	case errors.As(err, &re) && re.status == http.StatusRequestTimeout:
		// The rest of the body may never come: end the connection
		// rather than wait for it.
		w.Header().Set("Connection", "close")
	case timed:
		// No deadline afterwards: a waiting acquire notices a client that
		// goes away by reading its connection.
		_ = rc.SetReadDeadline(time.Time{})
	}
	return err
}

func decodeFrom(body io.Reader, v any) error {
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return decodeError(err)
		}
		return badRequest("malformed JSON: the body holds more than one JSON value")
	}
	return nil
}

func decodeError(err error) *requestError {
	var (
		mbe *http.MaxBytesError
		se  *json.SyntaxError
		te  *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &mbe):
		return &requestError{http.StatusRequestEntityTooLarge, wire.CodeTooLarge,
			fmt.Sprintf("the body is longer than %d bytes", mbe.Limit)}
	case errors.Is(err, os.ErrDeadlineExceeded):
		return &requestError{http.StatusRequestTimeout, wire.CodeTimeout, "the body was not sent in time"}
	case errors.Is(err, io.EOF):
		return badRequest("malformed JSON: the body is empty; send a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("malformed JSON: the body ends in the middle of a value")
	case errors.As(err, &se):
		return badRequest("malformed JSON at byte %d: %v", se.Offset, se)
	case errors.As(err, &te):
		return badRequest("malformed JSON: field %q must be a %s, not a JSON %s", te.Field, te.Type, te.Value)
	case strings.Contains(err.Error(), ",string struct tag"):
		return badRequest(`malformed JSON: "token" must be a JSON string of decimal digits, e.g. "42"`)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return badRequest("unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return badRequest("malformed JSON: %v", err)
}

// writeJSON answers status with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	if e, ok := v.(wire.Error); ok {
		refused(w, e.Error.Code)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, wire.Error{Error: wire.ErrorBody{Code: code, Message: msg}})
}

// minSecret is the length from which an owner id is cut out of messages;
// a real one is at least 128 random bits in text, and cutting a shorter
// one out would garble the message without hiding anything.
const minSecret = 16

// writeFailure answers err, an error of the request or of the store. The
// owner id, the client's secret, is cut out of the message.
func writeFailure(w http.ResponseWriter, err error, owner string) {
	status, body := failureOf(err, owner)
	if body.Code == wire.CodeOverCapacity {
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, status, wire.Error{Error: body})
}

// failureOf is failure with the owner id cut out of the message.
func failureOf(err error, owner string) (int, wire.ErrorBody) {
	status, body := failure(err)
	if len(owner) >= minSecret {
		body.Message = strings.ReplaceAll(body.Message, owner, "<owner>")
	}
	return status, body
}

// failure maps an error to its status and body.
func failure(err error) (int, wire.ErrorBody) {
	var (
		re *requestError
		he *leasehold.HeldError
	)
	msg := err.Error()
	switch {
	case errors.As(err, &re):
		return re.status, wire.ErrorBody{Code: re.code, Message: re.msg}
	case errors.As(err, &he):
		h := wire.Holder{Key: he.Key, Label: he.Label, Token: he.Token, RemainingMs: wire.MsFloor(he.Remaining)}
		return http.StatusConflict, wire.ErrorBody{Code: wire.CodeHeld, Message: msg, Holder: &h}
	}
	for _, r := range wire.Refusals() {
		if errors.Is(err, r.Err) {
			return r.Status, wire.ErrorBody{Code: r.Code, Message: msg}
		}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		msg = "the request ended before the store answered: " + msg
	}
	return http.StatusServiceUnavailable, wire.ErrorBody{Code: wire.CodeUnavailable, Message: msg}
}
