package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/leasehold-go/leasehold/internal/wire"
)

// sse writes one server-sent event stream. Each flush must reach the
// client's connection within Options.StreamWriteTimeout: a client that
// stops reading fills its connection's buffers, the write blocks, and the
// stream ends (the client was dropped); until then what the stream holds
// for it is bounded (MaxPendingKeys, one coalesced signal per key).
type sse struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	err     error
}

// newSSE returns the stream writer for w, or an error if w cannot stream.
func (s *Server) newSSE(w http.ResponseWriter) (*sse, error) {
	if _, ok := w.(http.Flusher); !ok {
		return nil, &requestError{http.StatusInternalServerError, wire.CodeUnavailable, "this connection cannot stream"}
	}
	return &sse{w: w, rc: http.NewResponseController(w), timeout: s.opts.StreamWriteTimeout}, nil
}

// start sends the stream's headers (with the first flush).
func (e *sse) start() {
	e.w.Header().Set("Content-Type", "text/event-stream")
	e.w.Header().Set("Cache-Control", "no-store")
}

// event writes one event whose data is v as JSON.
func (e *sse) event(name string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		e.err = errors.Join(e.err, err)
		return
	}
	e.write("event: " + name + "\ndata: " + string(b) + "\n\n")
}

// comment writes a heartbeat, which notices a client that went away.
func (e *sse) comment() { e.write(":\n\n") }

func (e *sse) write(s string) {
	if e.err != nil {
		return
	}
	e.deadline()
	_, e.err = fmt.Fprint(e.w, s)
}

// flush sends what was written, and returns the stream's first error:
// the stream ends on it.
func (e *sse) flush() error {
	if e.err != nil {
		return e.err
	}
	e.deadline()
	e.err = e.rc.Flush()
	return e.err
}

// end lifts the write deadline, for the connection's next request.
func (e *sse) end() { _ = e.rc.SetWriteDeadline(time.Time{}) }

// deadline bounds the next write; a recorder (tests) has none.
func (e *sse) deadline() {
	_ = e.rc.SetWriteDeadline(time.Now().Add(e.timeout))
}

// pump runs a stream after its first event: it flushes out after each
// turn, writes a heartbeat every Options.Heartbeat (which notices a client
// that went away), and calls send when wake has a value; it returns when
// ctx (the request) or the server ends, wake is closed, or a write fails.
func (s *Server) pump(ctx context.Context, out *sse, wake <-chan struct{}, send func()) {
	beat := time.NewTicker(s.opts.Heartbeat)
	defer beat.Stop()
	for out.flush() == nil {
		select {
		case <-ctx.Done():
			return
		case <-s.ctx.Done():
			return
		case <-beat.C:
			out.comment()
		case _, open := <-wake:
			if !open {
				return
			}
			send()
		}
	}
}
