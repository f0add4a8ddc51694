package remote

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/leasehold-go/leasehold"
)

// maxEventLine bounds a line of the event stream.
const maxEventLine = 4096

// Subscribe signals whenever key may have become free: a release through
// the server, or the backend's own notification. It returns once the
// server's stream is established. When the stream ends (the server went
// away) the channel receives a last value and no more.
func (s *Store) Subscribe(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return s.watch(ctx, key, "notify")
}

// watch opens the server's event stream about key in mode (notify or
// watch) and returns once it says it is ready.
func (s *Store) watch(ctx context.Context, key, mode string) (<-chan struct{}, func(), error) {
	if err := leasehold.CheckHolder(key); err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	stopOnClose := context.AfterFunc(s.ctx, cancel)
	body, err := s.openStream(ctx, sctx, key, mode)
	if err != nil {
		cancel()
		stopOnClose()
		return nil, nil, err
	}
	s.mu.Lock()
	if s.closed { // Close has begun: it would not wait for this stream
		s.mu.Unlock()
		body.Close()
		cancel()
		stopOnClose()
		return nil, nil, s.fail("watch", leasehold.ErrClosed)
	}
	s.streams.Add(1)
	s.mu.Unlock()
	ch := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer s.streams.Done()
		defer close(done)
		defer body.Close()
		for {
			ev, err := body.r.next()
			if err != nil || ev == "change" {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return ch, func() { cancel(); <-done; stopOnClose() }, nil
}

// stream is an open event stream.
type stream struct {
	io.Closer
	r *eventReader
}

// openStream sends the watch request under sctx and reads up to the ready
// event; ctx is the caller's, for the error.
func (s *Store) openStream(ctx, sctx context.Context, key, mode string) (*stream, error) {
	if s.ctx.Err() != nil {
		return nil, s.fail("watch", leasehold.ErrClosed)
	}
	build := s.requestOn(sctx, "GET", "v1/watch?"+url.Values{"key": {key}, "mode": {mode}}.Encode(), nil)
	resp, _, err := s.send(anyServer, func(idx int) (*http.Request, error) {
		r, err := build(idx)
		if err == nil {
			r.Header.Set("Accept", "text/event-stream")
		}
		return r, err
	})
	if err != nil {
		return nil, s.ended(ctx, "watch", err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
		return nil, s.refusal("watch", resp.StatusCode, b)
	}
	st := &stream{resp.Body, newEventReader(resp.Body)}
	ev, err := st.r.next()
	if err == nil && ev != "ready" {
		err = fmt.Errorf("the stream began with event %q, not ready", ev)
	}
	if err != nil {
		resp.Body.Close()
		return nil, s.ended(ctx, "watch", err)
	}
	return st, nil
}
