package harness

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/history"
	"github.com/leasehold-go/leasehold/faults/proxy"
	"github.com/leasehold-go/leasehold/faults/resource"
)

// RunConfig configures one run of the harness against one store.
type RunConfig struct {
	Backend Backend
	Open    Opener
	// HolderCmd starts a holder process: the argv prefix to which the
	// holder's flags (HolderConfig.Args) are appended, for example
	// {"/path/to/faults", "holder"}. HolderEnv is added to its environment.
	HolderCmd []string
	HolderEnv []string
	// WallHolderCmd starts the holder whose wall clock F17 steps: the
	// same holder built with the patched time package
	// (clock.BuildShifted). Empty: F17 is not run.
	WallHolderCmd []string
	Dir           string        // run directory: histories, logs, the store's files
	Holders       int           // holder processes; default 3
	Keys          []string      // keys they contend for; default k0, k1
	TTL           time.Duration // default 1 s; raised to the store's MinTTL
	// Work is each protected operation's pause between its read and its
	// writes, the window a holder pause must land in to make a stale write
	// attempt; default DefaultWork(TTL). Gap is the longest pause of a
	// holder between a release and its next acquire (drawn at random up to
	// it); default DefaultGap(TTL). OpsMin and OpsMax bound the protected
	// operations per hold; default 2 and 6.
	Work           time.Duration
	Gap            time.Duration
	OpsMin, OpsMax int
	// Duration is how long the fault schedule runs; the schedule goes
	// through every fault class at least once, in an order drawn from
	// Seed, and repeats until Duration has passed.
	Duration time.Duration
	Seed     uint64
	// Mutation disables the resource's fence check and runs only pauses
	// (F2): the checkers must report stale writes admitted.
	Mutation bool
	// Faults restricts the fault classes (nil: every class the store
	// supports).
	Faults []string
	Log    func(format string, a ...any)
}

// withDefaults fills in the defaults and checks the required fields.
func (cfg RunConfig) withDefaults() (RunConfig, error) {
	if cfg.Holders == 0 {
		cfg.Holders = 3
	}
	if len(cfg.Keys) == 0 {
		cfg.Keys = []string{"k0", "k1"}
	}
	if cfg.TTL == 0 {
		cfg.TTL = time.Second
	}
	if cfg.OpsMin == 0 && cfg.OpsMax == 0 {
		cfg.OpsMin, cfg.OpsMax = 2, 6
	}
	if cfg.OpsMin < 1 || cfg.OpsMax < cfg.OpsMin || cfg.Work < 0 || cfg.Gap < 0 || cfg.Holders < 1 {
		return cfg, fmt.Errorf("faults: RunConfig: bad holders %d, ops %d-%d, work %s or gap %s", cfg.Holders, cfg.OpsMin, cfg.OpsMax, cfg.Work, cfg.Gap)
	}
	if cfg.Backend == nil || cfg.Open == nil || len(cfg.HolderCmd) == 0 || cfg.Dir == "" {
		return cfg, errors.New("faults: RunConfig needs Backend, Open, HolderCmd and Dir")
	}
	return cfg, nil
}

// DefaultWork is the work step of a protected operation at the given TTL:
// TTL/5, at most MaxWork. It does not scale past that with a long TTL (a
// 15 s TTL would mean 3 s between read and write and a fifteenth of the
// writes): at 200 ms it is still most of an operation, whose three
// requests to the resource take a few milliseconds, so a holder pause
// still lands in it and wakes to a stale write attempt.
func DefaultWork(ttl time.Duration) time.Duration { return min(ttl/5, MaxWork) }

// DefaultGap is the longest pause of a holder between its release of a key
// and its next acquire at the given TTL: TTL/4, at most MaxGap.
func DefaultGap(ttl time.Duration) time.Duration { return min(ttl/4, MaxGap) }

// MaxWork and MaxGap cap DefaultWork and DefaultGap.
const (
	MaxWork = 200 * time.Millisecond
	MaxGap  = 250 * time.Millisecond
)

// KeyNames returns the n keys k0, k1, ... k(n-1).
func KeyNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("k%d", i)
	}
	return out
}

// Run runs the harness once: starts the store, the resource and the
// holders, injects the faults, stops everything and checks the history.
// A store that cannot be started is an error, never a skip.
//
// Its phases: start the store and read its claims (startStore, newResult);
// start the resource and the holders and wait until every key is written
// (startHolders); run the fault schedule (schedule); wait for every key to
// make progress again (quietWindow); kill the holders and acquire every
// key afresh (finalProbe); merge the histories and check them.
func Run(ctx context.Context, cfg RunConfig) (res *check.RunResult, err error) {
	cfg, err = cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	h := newHarness(ctx, cfg)
	defer func() {
		if cerr := h.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if err := h.startStore(); err != nil {
		return nil, err
	}
	result, err := h.newResult()
	if err != nil {
		return nil, err
	}
	if err := h.startHolders(); err != nil {
		return nil, err
	}
	start, load0 := history.Mono(), loadAvg()
	stopStalls := h.watchStalls()
	defer stopStalls()
	if err := h.schedule(start); err != nil {
		return nil, err
	}
	quietFrom, end := h.quietWindow()
	result.Seconds = float64(end-start) / 1e9
	result.Load = [2]float64{load0, loadAvg()}
	h.killHolders()
	final := h.finalProbe(result.TakeoverBound)

	evs, err := history.Merge(cfg.Dir, "hist-*.jsonl", h.rec.Events())
	if err != nil {
		return nil, err
	}
	p := check.Params{TTL: h.cfg.TTL, QuietFrom: quietFrom, End: end, Final: final, LossFaults: lossFaults(h.cfg.Backend)}
	result.Metrics = check.Run(evs, p)
	result.Notes = h.notes
	check.Judge(result)
	h.judgeWallStep(result)
	result.Invalid = append(result.Invalid, h.invalid...)
	return result, nil
}

// newHarness returns the state of a run, with its recorder: the harness's
// own events and the resource's, and the reads of the W1 counter passed
// on to reader.
func newHarness(ctx context.Context, cfg RunConfig) *harness {
	h := &harness{cfg: cfg, ctx: ctx, rng: rand.New(rand.NewPCG(cfg.Seed, 0x5eed)), reads: make(chan history.Event, 256)}
	h.rec = history.NewMemRecorder("harness", func(e history.Event) {
		if e.Kind == history.EvRead {
			select {
			case h.reads <- e:
			default:
			}
		}
	})
	return h
}

// close stops every process, proxy and server the run started.
func (h *harness) close() error {
	h.procs.killAll()
	for _, s := range h.allSlots() {
		for _, p := range s.proxies {
			p.Close()
		}
	}
	if h.res != nil {
		h.res.Close()
	}
	b := h.cfg.Backend
	if err := b.Close(); err != nil {
		return fmt.Errorf("stop %s: %w", b.Name(), err)
	}
	return nil
}

// startStore starts the store, up to three times: a free port found by
// binding :0 can be taken by someone else before the server binds it, so
// each attempt uses new ports and files.
func (h *harness) startStore() error {
	b := h.cfg.Backend
	storeDir := filepath.Join(h.cfg.Dir, "store")
	if err := os.MkdirAll(storeDir, 0o755); err != nil {
		return err
	}
	h.logf("%s: starting the store", b.Name())
	for attempt := 1; ; attempt++ {
		err := b.Start(h.ctx, storeDir)
		if err == nil {
			break
		}
		_ = b.Close()
		if attempt == 3 || h.ctx.Err() != nil {
			return fmt.Errorf("start %s: %w", b.Name(), err)
		}
		h.logf("%s: start failed (%v), retrying", b.Name(), err)
		storeDir = filepath.Join(h.cfg.Dir, fmt.Sprintf("store%d", attempt+1))
		if err := os.MkdirAll(storeDir, 0o755); err != nil {
			return err
		}
	}
	h.url = b.URL(b.Endpoints())
	return nil
}

// newResult asks the store for its claims and bounds (raising the TTL to
// its MinTTL) and returns the run's result, to be filled in.
func (h *harness) newResult() (*check.RunResult, error) {
	info, err := h.probeInfo()
	if err != nil {
		return nil, err
	}
	h.cfg.TTL = max(h.cfg.TTL, info.MinTTL)
	cfg := h.cfg
	result := &check.RunResult{
		Store: cfg.Backend.Name(), Seed: cfg.Seed, TTL: cfg.TTL, Mutation: cfg.Mutation,
		SafeTokens: info.SafeTokens, TokenCaveat: info.TokenCaveat, TakeoverBound: 1 + 1.0/3, Dir: cfg.Dir,
		Holders: cfg.Holders, Keys: len(cfg.Keys), Commit: buildCommit(h.ctx),
	}
	if tb, ok := cfg.Backend.(TakeoverBounder); ok {
		result.TakeoverBound = tb.TakeoverBound(cfg.TTL)
	}
	h.bound, h.longPaused = result.TakeoverBound, map[int]bool{}
	return result, nil
}

// startHolders starts the resource, a proxy per holder slot and store
// endpoint, and the regular holders (the extra slot's holder is started by
// the faults that use it), and waits until every key has been written.
func (h *harness) startHolders() error {
	h.res = resource.New(h.rec, h.cfg.Mutation)
	if err := h.res.Start(); err != nil {
		return err
	}
	for i := 0; i <= h.cfg.Holders; i++ {
		s := &slot{idx: i, rate: 1}
		if i == h.cfg.Holders {
			h.extra = s
		} else {
			h.slots = append(h.slots, s)
		}
		for _, ep := range h.cfg.Backend.Endpoints() {
			p, err := proxy.New(ep)
			if err != nil {
				return err
			}
			s.proxies = append(s.proxies, p)
		}
	}
	for _, s := range h.slots {
		if err := h.spawn(s); err != nil {
			return err
		}
	}
	return h.warmUp()
}

// schedule runs every fault class that applies, in an order drawn from the
// seed, pass after pass until the configured duration has passed since
// start.
func (h *harness) schedule(start int64) error {
	classes := h.classes()
	h.logf("%s: TTL %s, faults %v", h.cfg.Backend.Name(), h.cfg.TTL, classes)
	for h.pass = 0; ; h.pass++ {
		order := append([]string(nil), classes...)
		h.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, c := range order {
			if h.ctx.Err() != nil {
				return h.ctx.Err()
			}
			if err := h.episode(c); err != nil {
				return fmt.Errorf("%s: %s: %w", h.cfg.Backend.Name(), c, err)
			}
		}
		if history.Since(start) >= h.cfg.Duration {
			return nil
		}
	}
}

// quietWindow lets the faults heal and settle, then watches every key make
// progress: it returns when the window began and ended. On a starved
// machine a healthy key can go 3 x TTL without a write, so the window
// stretches until every key has progressed: a key counts as stuck only if
// it makes no progress at all. It stretches to 20 x TTL at most, or to the
// takeover bound plus 3 x TTL where that is longer (a Consul key left
// locked by a session that a fault ended frees only after up to 2 x the
// 10 s session TTL plus the lock-delay, 28 x a 750 ms TTL).
func (h *harness) quietWindow() (from, end int64) {
	T := h.cfg.TTL
	h.reviveDead()
	h.sleep(2 * T)
	from = history.Mono()
	h.sleep(3 * T)
	waited, limit := 3, max(20, int(math.Ceil(h.bound))+3)
	for ; waited < limit && len(h.written(from)) < len(h.cfg.Keys) && h.ctx.Err() == nil; waited++ {
		h.sleep(T)
	}
	if waited > 3 {
		h.notes = append(h.notes, fmt.Sprintf("quiet window stretched to %d x TTL before every key had progressed (load %.1f)", waited, loadAvg()))
	}
	return from, history.Mono()
}

// killHolders kills every holder without a release.
func (h *harness) killHolders() {
	var ids []string
	for _, s := range h.allSlots() {
		if s.proc != nil {
			s.proc.Kill()
			ids = append(ids, s.id)
		}
	}
	// Recorded after the kills, so that its T bounds them: a release a
	// holder had in flight may have reached the store up to then
	// (the lease-history check's maybe-releases).
	if len(ids) > 0 {
		h.rec.Record(history.Event{Kind: history.EvEndKill, Target: strings.Join(ids, ",")})
	}
}

// watchStalls records machine-wide stalls (EvStall) until the returned
// function is called.
func (h *harness) watchStalls() (stop func()) {
	ctx, cancel := context.WithCancel(h.ctx)
	done := make(chan struct{})
	go func() { defer close(done); watchStalls(ctx, h.rec) }()
	return func() { cancel(); <-done }
}

func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var x float64
	_, _ = fmt.Sscanf(string(b), "%f", &x)
	return x
}

// watchStalls records an EvStall whenever the harness's own 10 ms sleep
// overruns by more than history.StallThreshold.
func watchStalls(ctx context.Context, rec history.Recorder) {
	const tick = 10 * time.Millisecond
	prev := history.Mono()
	for ctx.Err() == nil {
		time.Sleep(tick)
		now := history.Mono()
		if time.Duration(now-prev) > tick+history.StallThreshold {
			rec.Record(history.Event{Kind: history.EvStall, T0: prev, T: now})
		}
		prev = now
	}
}
