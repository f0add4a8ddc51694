// Package resource is the fault harness's protected resource: an HTTP
// service (Server) holding, per key, an unfenced counter (W1) and a fenced
// register (W2) behind fence.Middleware, which records every operation to
// a history, and the handle (Client) the holder processes reach it with.
package resource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/leasehold-go/leasehold/faults/history"
	"github.com/leasehold-go/leasehold/fence"
)

// Request headers the holders send to the resource. The token of a fenced
// write travels in fence.Header; the others only label the history.
const (
	HeaderHolder = "X-Holder" // holder id
	HeaderOwner  = "X-Owner"  // the grant's owner id
	HeaderToken  = "X-Token"  // the grant's token, on unfenced requests (never checked)
	HeaderReq    = "X-Req"    // request id
)

// Server is the protected resource: per key, an unfenced counter (W1) and
// a fenced register (W2) behind fence.Middleware. It records every read,
// write, admission and refusal, with its own CLOCK_MONOTONIC timestamps, in
// the order it performed them.
type Server struct {
	rec      history.Recorder
	disabled bool // mutation: the fence admits everything

	mu       sync.Mutex
	counters map[string]int64
	values   map[string]int64
	guard    fence.MemoryGuard
	shadow   map[string]uint64 // highest token admitted, kept when the check is disabled

	srv *http.Server
	ln  net.Listener
}

// New returns a resource that records to rec. With fenceDisabled
// the register admits every write whatever its token (the mutation that
// the checkers must catch).
func New(rec history.Recorder, fenceDisabled bool) *Server {
	return &Server{
		rec: rec, disabled: fenceDisabled,
		counters: make(map[string]int64), values: make(map[string]int64),
		shadow: make(map[string]uint64),
	}
}

type metaKey struct{}

type reqMeta struct{ holder, owner, req string }

// Start serves on a free loopback port until Close.
func (r *Server) Start() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /counter/{key}", r.read)
	mux.HandleFunc("PUT /counter/{key}", r.cwrite)
	reg := fence.MiddlewareOptions{
		Resource: func(q *http.Request) string { return q.PathValue("key") },
	}.Wrap(fence.GuardFunc(r.admit), http.HandlerFunc(r.fwrite))
	mux.Handle("POST /register/{key}", http.HandlerFunc(func(w http.ResponseWriter, q *http.Request) {
		m := reqMeta{holder: q.Header.Get(HeaderHolder), owner: q.Header.Get(HeaderOwner), req: q.Header.Get(HeaderReq)}
		reg.ServeHTTP(w, q.WithContext(context.WithValue(q.Context(), metaKey{}, m)))
	}))
	r.ln = ln
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return nil
}

// URL returns the resource's base URL.
func (r *Server) URL() string { return "http://" + r.ln.Addr().String() }

// Close stops the server.
func (r *Server) Close() error {
	if r.srv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := r.srv.Shutdown(ctx); err != nil {
		return r.srv.Close()
	}
	return nil
}

// admit is the fence's guard: the MemoryGuard (or, in the mutation, no
// check at all), recorded in the same critical section as the decision.
func (r *Server) admit(ctx context.Context, key string, token uint64) error {
	m, _ := ctx.Value(metaKey{}).(reqMeta)
	r.mu.Lock()
	defer r.mu.Unlock()
	hi := r.shadow[key]
	var err error
	if !r.disabled {
		err = r.guard.Admit(ctx, key, token)
	}
	e := history.Event{Kind: history.EvAdmit, Key: key, Token: token, Owner: m.owner, Req: m.req, Target: m.holder, Highest: hi}
	if err != nil {
		e.Kind = history.EvFenced
		e.Err = err.Error()
	} else if token > hi {
		r.shadow[key] = token
	}
	r.rec.Record(e)
	return err
}

// fwrite stores the value of an admitted register write.
func (r *Server) fwrite(w http.ResponseWriter, q *http.Request) {
	v, err := strconv.ParseInt(q.URL.Query().Get("v"), 10, 64)
	if err != nil {
		http.Error(w, "bad v", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.values[q.PathValue("key")] = v
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func labels(q *http.Request) (holder, owner, req string, token uint64) {
	token, _ = strconv.ParseUint(q.Header.Get(HeaderToken), 10, 64)
	return q.Header.Get(HeaderHolder), q.Header.Get(HeaderOwner), q.Header.Get(HeaderReq), token
}

// read returns the counter (W1).
func (r *Server) read(w http.ResponseWriter, q *http.Request) {
	key := q.PathValue("key")
	holder, owner, req, token := labels(q)
	r.mu.Lock()
	v := r.counters[key]
	r.rec.Record(history.Event{Kind: history.EvRead, Key: key, Token: token, Owner: owner, Req: req, Target: holder, Val: v})
	r.mu.Unlock()
	_ = json.NewEncoder(w).Encode(v)
}

// cwrite sets the counter, unconditionally (W1).
func (r *Server) cwrite(w http.ResponseWriter, q *http.Request) {
	key := q.PathValue("key")
	holder, owner, req, token := labels(q)
	v, err := strconv.ParseInt(q.URL.Query().Get("v"), 10, 64)
	if err != nil {
		r.rec.Record(history.Event{Kind: history.EvBadRequest, Key: key, Err: "bad v"})
		http.Error(w, "bad v", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	prev := r.counters[key]
	r.counters[key] = v
	r.rec.Record(history.Event{Kind: history.EvCWrite, Key: key, Token: token, Owner: owner, Req: req, Target: holder, Val: v, Prev: prev})
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// Counter returns the counter of key.
func (r *Server) Counter(key string) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counters[key]
}

// Client is a holder's handle on the resource.
type Client struct {
	Base   string
	Holder string
	HTTP   *http.Client
}

func (c *Client) do(ctx context.Context, method, path string, hdr map[string]string) (*http.Response, error) {
	q, err := http.NewRequestWithContext(ctx, method, c.Base+path, nil)
	if err != nil {
		return nil, err
	}
	q.Header.Set(HeaderHolder, c.Holder)
	for k, v := range hdr {
		q.Header.Set(k, v)
	}
	return c.HTTP.Do(q)
}

// Read reads key's counter.
func (c *Client) Read(ctx context.Context, key, owner, req string, token uint64) (int64, error) {
	resp, err := c.do(ctx, http.MethodGet, "/counter/"+key, map[string]string{HeaderOwner: owner, HeaderReq: req, HeaderToken: strconv.FormatUint(token, 10)})
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("read %s: %s", key, resp.Status)
	}
	var v int64
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return 0, fmt.Errorf("read %s: %w", key, err)
	}
	return v, nil
}

// WriteCounter sets key's counter to v, unfenced. It returns the HTTP status.
func (c *Client) WriteCounter(ctx context.Context, key, owner, req string, token uint64, v int64) (int, error) {
	resp, err := c.do(ctx, http.MethodPut, "/counter/"+key+"?v="+strconv.FormatInt(v, 10), map[string]string{HeaderOwner: owner, HeaderReq: req, HeaderToken: strconv.FormatUint(token, 10)})
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// WriteRegister writes v to key's fenced register with token in
// fence.Header. It returns the HTTP status: 204 admitted, 409 fenced out.
func (c *Client) WriteRegister(ctx context.Context, key, owner, req string, token uint64, v int64) (int, error) {
	resp, err := c.do(ctx, http.MethodPost, "/register/"+key+"?v="+strconv.FormatInt(v, 10), map[string]string{HeaderOwner: owner, HeaderReq: req, fence.Header: fence.FormatToken(token)})
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusConflict {
		return resp.StatusCode, errors.New("register write: " + resp.Status)
	}
	return resp.StatusCode, nil
}

// CheckKey rejects keys the resource's paths cannot carry.
func CheckKey(key string) error {
	if key == "" || strings.ContainsAny(key, "/?#% ") {
		return fmt.Errorf("faults: key %q cannot be used in a resource path", key)
	}
	return nil
}
