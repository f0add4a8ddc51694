// Package stall runs W7, fence.Middleware under writers that stall between
// admission and write, over real HTTP. Writers take leases on the store,
// send one fenced write each with the lease's token, give up on the write
// after Config.Timeout and release the lease; the next writer then takes
// the key with a higher token. The server's handler, behind the
// middleware, stalls at random after the admission for longer than that
// timeout, and lands its write whether or not the client is still there (a
// handler that does not watch its request's context). A stale write
// landed is a write whose token is lower than a write already landed on
// the same key.
//
// The store only issues the tokens: it is one of the harness's backends
// (harness.Backend), started by Run.
package stall

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/harness"
	"github.com/leasehold-go/leasehold/faults/history"
	"github.com/leasehold-go/leasehold/faults/resource"
	"github.com/leasehold-go/leasehold/fence"
)

// Config configures one run of the middleware-stall workload (W7).
type Config struct {
	Backend harness.Backend // the store the writers lease their keys from
	Open    harness.Opener
	Dir     string // the store's files
	// Unsafe wraps the handler with fence.MiddlewareOptions{UnsafeConcurrent:
	// true}: the negative control, which must land stale writes.
	Unsafe   bool
	Writers  int           // writer goroutines, each with its own client and store connection; default 4
	Keys     []string      // default k0, k1
	Duration time.Duration // default 10 s
	// Timeout is how long a writer waits for its write before giving up
	// and releasing its lease; default 100 ms. A stall lasts 1.5-3 x
	// Timeout.
	Timeout time.Duration
	// StallRate is the share of admitted writes whose handler stalls;
	// default 0.3.
	StallRate float64
	Seed      uint64
	Log       func(format string, a ...any)
}

// stallServer is W7's HTTP service.
type stallServer struct {
	cfg Config

	mu        sync.Mutex
	rng       *rand.Rand
	arrived   map[string]uint64 // highest token that reached the server, per key
	lands     []check.Landing
	stalls    int
	overtaken int
}

func (s *stallServer) handler() http.Handler {
	var guard fence.MemoryGuard
	write := fence.MiddlewareOptions{
		UnsafeConcurrent: s.cfg.Unsafe,
		Resource:         func(q *http.Request) string { return q.PathValue("key") },
	}.Wrap(&guard, http.HandlerFunc(s.land))
	mux := http.NewServeMux()
	mux.Handle("POST /w7/{key}", http.HandlerFunc(func(w http.ResponseWriter, q *http.Request) {
		if tok, err := fence.RequestToken(q); err == nil {
			s.mu.Lock()
			s.arrived[q.PathValue("key")] = max(s.arrived[q.PathValue("key")], tok)
			s.mu.Unlock()
		}
		write.ServeHTTP(w, q)
	}))
	return mux
}

// land is the handler behind the middleware: it stalls at random, then
// lands the write, whatever became of the client.
func (s *stallServer) land(w http.ResponseWriter, q *http.Request) {
	key := q.PathValue("key")
	token, _ := fence.TokenFrom(q.Context())
	s.mu.Lock()
	var stall time.Duration
	if s.rng.Float64() < s.cfg.StallRate {
		stall = time.Duration(float64(s.cfg.Timeout) * (1.5 + 1.5*s.rng.Float64()))
		s.stalls++
	}
	s.mu.Unlock()
	if stall > 0 {
		time.Sleep(stall) // not interrupted by the client going away, on purpose
	}
	s.mu.Lock()
	if stall > 0 && s.arrived[key] > token {
		s.overtaken++
	}
	s.lands = append(s.lands, check.Landing{Key: key, Token: token, T: history.Mono(), Req: q.Header.Get(resource.HeaderReq)})
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// withDefaults fills in the defaults and checks the required fields.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Backend == nil || cfg.Open == nil || cfg.Dir == "" {
		return cfg, errors.New("faults: stall.Config needs Backend, Open and Dir")
	}
	if cfg.Writers == 0 {
		cfg.Writers = 4
	}
	if len(cfg.Keys) == 0 {
		cfg.Keys = []string{"k0", "k1"}
	}
	if cfg.Duration == 0 {
		cfg.Duration = 10 * time.Second
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 100 * time.Millisecond
	}
	if cfg.StallRate == 0 {
		cfg.StallRate = 0.3
	}
	return cfg, nil
}

// Run runs W7 once: it starts the store and the service, runs the
// writers for cfg.Duration and checks the landing order.
func Run(ctx context.Context, cfg Config) (res *check.StallResult, err error) {
	cfg, err = cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	b := cfg.Backend
	storeDir := filepath.Join(cfg.Dir, "store")
	if err := os.MkdirAll(storeDir, 0o755); err != nil {
		return nil, err
	}
	if err := b.Start(ctx, storeDir); err != nil {
		_ = b.Close()
		return nil, fmt.Errorf("start %s: %w", b.Name(), err)
	}
	defer func() {
		if cerr := b.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("stop %s: %w", b.Name(), cerr)
		}
	}()
	url := b.URL(b.Endpoints())
	if err := setUpStore(ctx, cfg.Open, url); err != nil {
		return nil, err
	}
	s := &stallServer{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x57a11)), arrived: map[string]uint64{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.Serve(ln) }()

	res = &check.StallResult{Store: b.Name(), Seed: cfg.Seed, Unsafe: cfg.Unsafe, Writers: cfg.Writers, Keys: len(cfg.Keys)}
	start := history.Mono()
	werr := runStallWriters(ctx, cfg, url, "http://"+ln.Addr().String(), res)
	// Let the stalled handlers land before the check.
	sctx, scancel := context.WithTimeout(context.Background(), 3*cfg.Timeout+5*time.Second)
	_ = srv.Shutdown(sctx)
	scancel()
	<-served
	res.Seconds = history.Since(start).Seconds()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if werr != nil {
		return nil, werr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	res.Landed, res.Stalls, res.Overtaken = len(s.lands), s.stalls, s.overtaken
	res.StaleLanded, res.Violations = check.StaleLandings(s.lands)
	check.JudgeStall(res)
	return res, nil
}

// runStallWriters runs cfg.Writers writers against the service at base for
// cfg.Duration, adding up their counts in res.
func runStallWriters(ctx context.Context, cfg Config, url, base string, res *check.StallResult) error {
	mode := "default options"
	if cfg.Unsafe {
		mode = "UnsafeConcurrent (negative control)"
	}
	if cfg.Log != nil {
		cfg.Log("%s: W7 fence.Middleware with %s, %d writers on %v, %s", cfg.Backend.Name(), mode, cfg.Writers, cfg.Keys, cfg.Duration)
	}
	wctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		werrs []error
	)
	for i := range cfg.Writers {
		wg.Go(func() {
			c, err := runStallWriter(wctx, cfg, url, base, i)
			mu.Lock()
			defer mu.Unlock()
			res.Sent += c.sent
			res.Refused += c.refused
			res.GaveUp += c.gaveUp
			res.Unavailable += c.unavailable
			res.AcquireRetries += c.acqRetries
			if err != nil {
				werrs = append(werrs, fmt.Errorf("writer %d: %w", i, err))
			}
		})
	}
	wg.Wait()
	return errors.Join(werrs...)
}

// setUpStore opens the store once, waiting for it to answer, and runs its
// migration if it has one.
func setUpStore(ctx context.Context, open harness.Opener, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		s, err := open(ctx, url)
		if err == nil {
			defer s.Close()
			if m, ok := s.(interface{ Migrate(context.Context) error }); ok {
				return m.Migrate(ctx)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("open %s: %w", url, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

type stallCounts struct{ sent, refused, gaveUp, unavailable, acqRetries int }

// retryable reports whether a writer tries an acquire again after err: a
// lease lost on its way (under load a grant can arrive after the client's
// own deadline, which the client rightly refuses) or a store failure,
// but not a refusal another try cannot change (tokens exhausted, a
// foreign record) nor a misuse (bad key, closed client).
func retryable(err error) bool {
	if errors.Is(err, leasehold.ErrTokensExhausted) || errors.Is(err, leasehold.ErrForeignRecord) {
		return false
	}
	return errors.Is(err, leasehold.ErrLost) || errors.Is(err, leasehold.ErrExpired) || errors.Is(err, leasehold.ErrStore)
}

// acquire takes key, trying again (after a short pause) while the acquire
// fails in a retryable way, as the harness's holders do; it counts the
// retries in c. It returns nil with no error when ctx ends.
func acquire(ctx context.Context, client *leasehold.Client, key string, rng *rand.Rand, c *stallCounts) (*leasehold.Lease, error) {
	for {
		l, err := client.Acquire(ctx, key, leasehold.AcquireOptions{Wait: leasehold.WaitForever})
		switch {
		case err == nil:
			return l, nil
		case ctx.Err() != nil:
			return nil, nil
		case !retryable(err):
			return nil, fmt.Errorf("acquire %s: %w", key, err)
		}
		c.acqRetries++
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(time.Duration(1+rng.IntN(20)) * time.Millisecond):
		}
	}
}

// runStallWriter takes a lease on a random key, sends one fenced write
// with its token, waits for it at most cfg.Timeout, releases the lease and
// starts again, until ctx ends.
func runStallWriter(ctx context.Context, cfg Config, url, base string, idx int) (stallCounts, error) {
	var c stallCounts
	store, err := cfg.Open(ctx, url)
	if err != nil {
		return c, err
	}
	defer store.Close()
	client, err := leasehold.New(store, &leasehold.Options{
		TTL:     time.Second,
		Label:   "w7-writer-" + strconv.Itoa(idx),
		Backoff: leasehold.ExpBackoff{Base: 2 * time.Millisecond, Cap: 20 * time.Millisecond},
	})
	if err != nil {
		return c, err
	}
	defer client.Close()
	hc := &http.Client{Transport: &fence.RoundTripper{Base: &http.Transport{MaxIdleConnsPerHost: 2}}}
	defer hc.CloseIdleConnections()
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(idx)+1))
	for n := 0; ctx.Err() == nil; n++ {
		key := cfg.Keys[rng.IntN(len(cfg.Keys))]
		l, err := acquire(ctx, client, key, rng, &c)
		if err != nil || l == nil {
			return c, err
		}
		rctx, cancel := context.WithTimeout(fence.WithToken(context.Background(), l.Token()), cfg.Timeout)
		req, err := http.NewRequestWithContext(rctx, http.MethodPost, base+"/w7/"+key, nil)
		if err != nil {
			cancel()
			return c, err
		}
		req.Header.Set(resource.HeaderReq, fmt.Sprintf("w%d-%d", idx, n))
		c.sent++
		resp, err := hc.Do(req)
		switch {
		case err != nil && rctx.Err() != nil:
			c.gaveUp++
		case err != nil:
			cancel()
			_ = l.Release(context.Background())
			return c, fmt.Errorf("write %s: %w", key, err)
		default:
			resp.Body.Close()
			switch resp.StatusCode {
			case http.StatusNoContent:
			case http.StatusConflict:
				c.refused++
			case http.StatusServiceUnavailable:
				c.unavailable++
			default:
				cancel()
				_ = l.Release(context.Background())
				return c, fmt.Errorf("write %s: %s", key, resp.Status)
			}
		}
		cancel()
		if err := l.Release(context.Background()); err != nil && !errors.Is(err, leasehold.ErrNotHeld) {
			return c, fmt.Errorf("release %s: %w", key, err)
		}
	}
	return c, nil
}
