package serve

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/leasehold-go/leasehold/internal/wire"
)

// LatencyBuckets are the upper bounds, in seconds, of the buckets of
// Metrics' request latency histograms.
var LatencyBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// Metrics is a snapshot of the server's counters, for a metrics exporter
// (leasehold serve exports them in Prometheus's format at GET /metrics).
// Its labels are fixed sets: a route of the API ("other" for any other
// path), an HTTP status, an error code of the API. No key, owner id,
// token or bearer secret is ever part of one.
type Metrics struct {
	// Requests counts the answered requests by route and status.
	Requests []RequestCount
	// Latency is the time to answer, by route, from the request's
	// arrival to the handler's return. Watch streams are not in it (they
	// last until the client goes); an acquire's time includes its wait.
	Latency []RouteLatency
	// Refusals counts the error answers by their code (wire's Code
	// constants: held, not_held, forbidden, over_capacity, ...).
	Refusals map[string]uint64
	// BackendErrors counts the store's failures: requests answered
	// store_unavailable (while their client was still there) or
	// foreign_record, and failed releases of the sweeper and lists of
	// the watches by prefix.
	BackendErrors uint64
	// AcquireWaits is the number of acquires waiting now for a held key.
	AcquireWaits int64
	// WatchStreams is the number of watch streams open now.
	WatchStreams int64
	// KeptGrants is the number of grants the server keeps now (see
	// Server).
	KeptGrants int
}

// RequestCount is the number of requests to Route answered Status.
type RequestCount struct {
	Route  string
	Status int
	Count  uint64
}

// RouteLatency is a latency histogram of one route: Buckets[i] counts the
// requests that took at most LatencyBuckets[i] seconds (cumulative, as
// Prometheus has them); Sum is in seconds.
type RouteLatency struct {
	Route   string
	Buckets []uint64
	Sum     float64
	Count   uint64
}

// counters are the server's counters behind Metrics.
type counters struct {
	mu        sync.Mutex
	requests  map[routeStatus]uint64
	latency   map[string]*RouteLatency
	refusals  map[string]uint64
	backendKO uint64
}

type routeStatus struct {
	route  string
	status int
}

func newCounters() *counters {
	return &counters{requests: make(map[routeStatus]uint64), latency: make(map[string]*RouteLatency), refusals: make(map[string]uint64)}
}

// Metrics returns a snapshot of the server's counters.
func (s *Server) Metrics() Metrics {
	m := Metrics{AcquireWaits: s.waits.load(), WatchStreams: s.watches.load(), KeptGrants: s.bound.len()}
	st := s.counters
	st.mu.Lock()
	defer st.mu.Unlock()
	for k, n := range st.requests {
		m.Requests = append(m.Requests, RequestCount{Route: k.route, Status: k.status, Count: n})
	}
	slices.SortFunc(m.Requests, func(a, b RequestCount) int {
		if a.Route != b.Route {
			return cmp.Compare(a.Route, b.Route)
		}
		return a.Status - b.Status
	})
	for _, l := range st.latency {
		c := *l
		c.Buckets = slices.Clone(l.Buckets)
		m.Latency = append(m.Latency, c)
	}
	slices.SortFunc(m.Latency, func(a, b RouteLatency) int { return cmp.Compare(a.Route, b.Route) })
	m.Refusals = make(map[string]uint64, len(st.refusals))
	for c, n := range st.refusals {
		m.Refusals[c] = n
	}
	m.BackendErrors = st.backendKO
	return m
}

// metricsRoute serves GET /metrics through Options.MetricsHandler, to
// callers that may read some key; 501 without a handler.
func (s *Server) metricsRoute() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := s.authorizeAnywhere(r, VerbRead); err != nil {
			writeFailure(w, err, "")
			return
		}
		if s.opts.MetricsHandler == nil {
			writeError(w, http.StatusNotImplemented, wire.CodeNotImplemented, "this server exports no metrics (Options.MetricsHandler is not set)")
			return
		}
		s.opts.MetricsHandler.ServeHTTP(w, r)
	}
}

// backendError counts a failure of the store outside a request.
func (st *counters) backendError() {
	st.mu.Lock()
	st.backendKO++
	st.mu.Unlock()
}

// observe serves r through next, and counts it.
func (s *Server) observe(w http.ResponseWriter, r *http.Request, next func(http.ResponseWriter, *http.Request)) {
	start := time.Now()
	rec := &recorder{ResponseWriter: w}
	next(rec, r)
	route := "other"
	if s.allowed(r.URL.Path) != "" {
		route = r.URL.Path
	}
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	clientGone := errors.Is(r.Context().Err(), context.Canceled)
	st := s.counters
	st.mu.Lock()
	defer st.mu.Unlock()
	st.requests[routeStatus{route, status}]++
	if rec.code != "" {
		st.refusals[rec.code]++
		if rec.code == wire.CodeForeignRecord || (rec.code == wire.CodeUnavailable && !clientGone) {
			st.backendKO++
		}
	}
	if route == "/v1/watch" {
		return
	}
	l := st.latency[route]
	if l == nil {
		l = &RouteLatency{Route: route, Buckets: make([]uint64, len(LatencyBuckets))}
		st.latency[route] = l
	}
	secs := time.Since(start).Seconds()
	for i, le := range LatencyBuckets {
		if secs <= le {
			l.Buckets[i]++
		}
	}
	l.Sum += secs
	l.Count++
}

// recorder notes the status and the error code of an answer. It passes
// Flush and the ResponseController's deadlines through.
type recorder struct {
	http.ResponseWriter
	status int
	code   string
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Flush sends what was written.
func (r *recorder) Flush() { _ = r.FlushError() }

// FlushError sends what was written, and returns the connection's error.
func (r *recorder) FlushError() error {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return http.NewResponseController(r.ResponseWriter).Flush()
}

// Unwrap returns the ResponseWriter recorded.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// refused notes the code of an error answer written to w.
func refused(w http.ResponseWriter, code string) {
	if rec, ok := w.(*recorder); ok {
		rec.code = code
	}
}
