package serve

import (
	"context"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/wire"
)

// Limits of the handler.
const (
	// MaxBodyBytes bounds a request body; a longer one is refused with 413.
	MaxBodyBytes = 16 << 10
	// MaxWait bounds an acquire's wait_ms; a longer wait is cut to it (the
	// client asks again).
	MaxWait = 30 * time.Second
)

// Options configure a Server. The zero value is ready to use.
type Options struct {
	// Heartbeat is the period of the comment lines a watch stream sends
	// so that a client that went away is noticed; zero means 15 s.
	Heartbeat time.Duration
	// BodyTimeout bounds the time to read a request body; zero means
	// 10 s. A slower body is refused with 408.
	BodyTimeout time.Duration
	// Tokens, if set, are the bearer tokens the server accepts and what
	// each may do (deny by default); every request but GET
	// /v1/openapi.json needs one. Nil means no authentication.
	Tokens *Tokens
	// PrefixPoll is the period at which a watch by prefix lists the
	// prefix to see the changes made elsewhere (through other replicas,
	// directly on the store, expiries); zero means one second. Each
	// watched prefix is listed once per period, whatever the number of
	// its streams.
	PrefixPoll time.Duration
	// StreamWriteTimeout bounds each write of a watch stream: a client
	// that stops reading is dropped once its connection's buffers are
	// full and a write has waited this long; zero means 10 s.
	StreamWriteTimeout time.Duration
	// MaxWatches caps the watch streams open at once (by key and by
	// prefix); one more is refused with 503 over_capacity. Zero means
	// DefaultMaxWatches.
	MaxWatches int
	// MaxWaits caps the acquires waiting at once for a held key (with
	// wait_ms); one more that would wait is refused with 503
	// over_capacity. Zero means DefaultMaxWaits.
	MaxWaits int
	// MetricsHandler, if set, serves GET /metrics (on the API's own
	// listener, so its TLS and tokens apply): to a caller whose token may
	// read some key when Tokens is set. It exports Server.Metrics;
	// leasehold serve sets one in Prometheus's text format. Nil answers
	// 501.
	MetricsHandler http.Handler
	// Sweep is the period at which grants bound to the server (see
	// Server) whose TTL passed without a renewal are released; zero means
	// one second.
	Sweep time.Duration
	// Logger receives the server's audit lines (who broke which lease);
	// nil means slog.Default(). Secrets (tokens, owner ids) never reach it.
	Logger *slog.Logger
}

// Server is an http.Handler serving leasehold's /v1/ API over one Store.
//
// The server keeps a grant the store returns with state of its own (a
// Private: a session, a connection holding an advisory lock, an entry the
// store tracks) in memory under a random 128-bit handle that only the
// client learns, and renews and releases it through that state; it
// releases a kept grant whose TTL passed without a renewal, as the store's
// acquiring process would. For a backend with PortableGrants, a grant whose
// handle the server does not know (it restarted, or another replica made
// it) is rebuilt from its key, owner and token; for a backend without (the
// memory store, advisory locks, sessions), such a grant is not held: it
// ended with the server's process, and its client's renewal is refused, so
// its lease is lost. A grant of a store without Private, on a backend with
// PortableGrants, is not kept at all.
//
// The owner id is the client's secret: the server never logs it and never
// puts it in a holder, list or watch answer, nor in an error message.
type Server struct {
	store    leasehold.Store
	info     leasehold.Info
	opts     Options
	mux      *http.ServeMux
	bound    *handles           // the grants the server keeps
	local    *broker            // releases through this server, for watchers
	known    *known             // owner ids of portable grants, to break them
	stats    *stats             // waiters and contention, for the dashboard
	tmpl     *template.Template // the dashboard's page
	log      *slog.Logger
	polls    pollers   // the lists of watched prefixes
	watches  gauge     // watch streams open
	waits    gauge     // acquires waiting
	counters *counters // the counters of Metrics
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// New returns a Server over store; opts may be nil. Close it to stop its
// sweeper and release the grants it keeps; it does not close store.
func New(store leasehold.Store, opts *Options) *Server {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = 15 * time.Second
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = 10 * time.Second
	}
	if o.PrefixPoll <= 0 {
		o.PrefixPoll = time.Second
	}
	if o.StreamWriteTimeout <= 0 {
		o.StreamWriteTimeout = 10 * time.Second
	}
	if o.MaxWatches <= 0 {
		o.MaxWatches = DefaultMaxWatches
	}
	if o.MaxWaits <= 0 {
		o.MaxWaits = DefaultMaxWaits
	}
	if o.Sweep <= 0 {
		o.Sweep = time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{store: store, info: store.Info(), opts: o, bound: newHandles(), local: newBroker(),
		known: newKnown(), stats: newStats(), log: o.Logger, polls: pollers{m: make(map[string]*poller)},
		counters: newCounters(), ctx: ctx, cancel: cancel}
	s.wg.Add(1)
	go s.sweepLoop()
	s.mux = http.NewServeMux()
	for _, r := range routes {
		s.mux.HandleFunc(r.method+" "+r.path, r.handler(s))
	}
	s.addPages()
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, wire.CodeNotFound, "no route "+r.Method+" "+r.URL.Path+"; see /v1/openapi.json")
	})
	return s
}

// ServeHTTP serves the API, and counts the request (see Metrics).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.observe(w, r, s.route)
}

// route serves r by its route.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	h, pattern := s.mux.Handler(r)
	if isPage(pattern) { // the dashboard authenticates by itself
		h.ServeHTTP(w, r)
		return
	}
	if pattern == "" || pattern == "/" {
		if allowed := s.allowed(r.URL.Path); allowed != "" {
			w.Header().Set("Allow", allowed)
			writeError(w, http.StatusMethodNotAllowed, wire.CodeMethod, r.Method+" is not allowed on "+r.URL.Path+"; use "+allowed)
			return
		}
	}
	if r = s.authenticate(w, r); r != nil {
		h.ServeHTTP(w, r)
	}
}

// allowed returns the methods a known path takes, or "".
func (s *Server) allowed(path string) string {
	for _, r := range routes {
		if r.path == path {
			return r.method
		}
	}
	return ""
}

// Close stops the sweeper, ends the watch streams and releases the grants
// the server keeps (see Server). It does not close the store.
func (s *Server) Close() error {
	s.cancel()
	s.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, g := range s.bound.drain() {
		_ = s.store.Release(ctx, g)
	}
	return nil
}

// Abandon stops the sweeper and the watch streams and forgets the grants
// the server keeps without releasing them: what a crash of the server's
// process does (their TTLs end them in the store). For tests of a restart.
func (s *Server) Abandon() {
	s.cancel()
	s.wg.Wait()
	s.bound.drain()
}

// capabilities reports what the server offers over its backend.
func (s *Server) capabilities() wire.Capabilities {
	_, watch := s.store.(leasehold.Watcher)
	_, list := s.store.(leasehold.Lister)
	_, queue := s.store.(leasehold.Waiter)
	return wire.Capabilities{Notify: true, Watch: watch, List: list, Queue: queue, RenewMany: true, WatchPrefix: list}
}

func (s *Server) sweepLoop() {
	defer s.wg.Done()
	t := time.NewTicker(s.opts.Sweep)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
			s.known.expire(time.Now())
			for _, g := range s.bound.expired(time.Now()) {
				ctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
				switch err := s.store.Release(ctx, g); {
				case err == nil:
					s.local.signal(g.Key)
					s.stats.pulse()
				case !errors.Is(err, leasehold.ErrNotHeld):
					s.counters.backendError()
				}
				cancel()
			}
		}
	}
}
