package faults

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
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
	Dir       string        // run directory: histories, logs, the store's files
	Holders   int           // holder processes; default 3
	Keys      []string      // keys they contend for; default k0, k1
	TTL       time.Duration // default 1 s; raised to the store's MinTTL
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

// RunResult is the outcome of one run.
type RunResult struct {
	Store         string
	Seed          uint64
	TTL           time.Duration
	Seconds       float64 // wall time of the fault schedule and the quiet window
	Mutation      bool
	SafeTokens    bool
	TokenCaveat   string
	TakeoverBound float64 // ratio of the TTL
	Metrics       *Metrics
	Invalid       []string // why the run proves nothing (the faults did not bite)
	Missed        []string // targets the store claims and missed
	Notes         []string // faults skipped, and why
	Dir           string
	// Load is the machine's 1-minute load average at the start and the end
	// of the run (/proc/loadavg): the machine is shared, and a loaded one
	// stretches takeovers and pauses renewals.
	Load [2]float64
}

// FaultClasses are every fault class, in the order of the matrix.
var FaultClasses = []string{"F1", "F2", "F3", "F4", "F5", "F5c", "F6", "F7", "F8", "F9", "F9b", "F9m", "F10", "F11", "F12"}

// FaultNames describes each class.
var FaultNames = map[string]string{
	"F1":  "holder SIGSTOP for 0.3 x TTL",
	"F2":  "holder SIGSTOP for 1-3 x TTL, and once per pass for the takeover bound + 1-1.5 x TTL",
	"F3":  "holder SIGKILL and respawn",
	"F4":  "replies delayed by 1.5 x TTL",
	"F5":  "replies dropped after the store applied the request",
	"F5c": "an acquire's reply dropped after the store granted it; the statements the holder sent in the next second (its clean-up among them) held back until a retry of the holder won the key again: a late clean-up",
	"F6":  "partition of a holder from the store for 2 x TTL, then heal",
	"F7":  "connection resets every TTL/4 for 2 x TTL",
	"F8":  "store SIGSTOP for 2 x TTL",
	"F9":  "store SIGKILL and restart",
	"F9b": "store SIGKILL and restart without its data",
	"F9m": "a holder cut from one master; once that master's copy of its key expired, another master restarted empty (Redlock's split majority)",
	"F10": "leader SIGKILL (3-node cluster), restart after 2 x TTL",
	"F11": "store server clock step",
	"F12": "holder clock 40% slow (injected clock), partitioned for 2 x TTL",
}

type slot struct {
	idx     int
	gen     int
	rate    float64
	long    bool // holds each key until it loses it
	proxies []*Proxy
	proc    *Proc
	id      string
}

type harness struct {
	cfg       RunConfig
	ctx       context.Context
	rec       *MemRecorder
	res       *Resource
	rng       *rand.Rand
	url       string
	slots     []*slot
	extra     *slot // the slow-clock holder's slot (F12)
	reads     chan Event
	procs     Procs
	notes     []string
	bound     float64      // takeover bound, x TTL
	longPause map[int]bool // passes that had their long F2 pause

	mu sync.Mutex
}

func (h *harness) logf(format string, a ...any) {
	if h.cfg.Log != nil {
		h.cfg.Log(format, a...)
	}
}

// Run runs the harness once: starts the store, the resource and the
// holders, injects the faults, stops everything and checks the history.
// A store that cannot be started is an error, never a skip.
func Run(ctx context.Context, cfg RunConfig) (res *RunResult, err error) {
	if cfg.Holders == 0 {
		cfg.Holders = 3
	}
	if len(cfg.Keys) == 0 {
		cfg.Keys = []string{"k0", "k1"}
	}
	if cfg.TTL == 0 {
		cfg.TTL = time.Second
	}
	if cfg.Backend == nil || cfg.Open == nil || len(cfg.HolderCmd) == 0 || cfg.Dir == "" {
		return nil, errors.New("faults: RunConfig needs Backend, Open, HolderCmd and Dir")
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	h := &harness{cfg: cfg, ctx: ctx, rng: rand.New(rand.NewPCG(cfg.Seed, 0x5eed)), reads: make(chan Event, 256)}
	h.rec = NewMemRecorder("harness", func(e Event) {
		if e.Kind == EvRead {
			select {
			case h.reads <- e:
			default:
			}
		}
	})
	b := cfg.Backend
	storeDir := filepath.Join(cfg.Dir, "store")
	if err := os.MkdirAll(storeDir, 0o755); err != nil {
		return nil, err
	}
	defer func() {
		h.procs.KillAll()
		for _, s := range h.allSlots() {
			for _, p := range s.proxies {
				p.Close()
			}
		}
		if h.res != nil {
			h.res.Close()
		}
		if cerr := b.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("stop %s: %w", b.Name(), cerr)
		}
	}()
	h.logf("%s: starting the store", b.Name())
	for attempt := 1; ; attempt++ {
		// A free port found by binding :0 can be taken by someone else
		// before the server binds it: try again on new ports and files.
		err := b.Start(ctx, storeDir)
		if err == nil {
			break
		}
		_ = b.Close()
		if attempt == 3 || ctx.Err() != nil {
			return nil, fmt.Errorf("start %s: %w", b.Name(), err)
		}
		h.logf("%s: start failed (%v), retrying", b.Name(), err)
		storeDir = filepath.Join(cfg.Dir, fmt.Sprintf("store%d", attempt+1))
		if err := os.MkdirAll(storeDir, 0o755); err != nil {
			return nil, err
		}
	}
	h.url = b.URL(b.Endpoints())
	info, err := h.probeInfo()
	if err != nil {
		return nil, err
	}
	if info.MinTTL > cfg.TTL {
		cfg.TTL = info.MinTTL
		h.cfg.TTL = info.MinTTL
	}
	result := &RunResult{
		Store: b.Name(), Seed: cfg.Seed, TTL: cfg.TTL, Mutation: cfg.Mutation,
		SafeTokens: info.SafeTokens, TokenCaveat: info.TokenCaveat, TakeoverBound: 1 + 1.0/3, Dir: cfg.Dir,
	}
	if tb, ok := b.(TakeoverBounder); ok {
		result.TakeoverBound = tb.TakeoverBound(cfg.TTL)
	}
	h.bound, h.longPause = result.TakeoverBound, map[int]bool{}

	h.res = NewResource(h.rec, cfg.Mutation)
	if err := h.res.Start(); err != nil {
		return nil, err
	}
	for i := 0; i <= cfg.Holders; i++ {
		s := &slot{idx: i, rate: 1}
		if i == cfg.Holders {
			h.extra = s
		} else {
			h.slots = append(h.slots, s)
		}
		for _, ep := range b.Endpoints() {
			p, err := NewProxy(ep)
			if err != nil {
				return nil, err
			}
			s.proxies = append(s.proxies, p)
		}
	}
	for _, s := range h.slots {
		if err := h.spawn(s); err != nil {
			return nil, err
		}
	}
	if err := h.warmUp(); err != nil {
		return nil, err
	}
	start := Mono()
	load0 := loadAvg()
	stallCtx, stopStalls := context.WithCancel(ctx)
	stalls := make(chan struct{})
	go func() { defer close(stalls); watchStalls(stallCtx, h.rec) }()
	defer func() { stopStalls(); <-stalls }()
	classes := h.classes()
	h.logf("%s: TTL %s, faults %v", b.Name(), cfg.TTL, classes)
	for pass := 0; ; pass++ {
		order := append([]string(nil), classes...)
		h.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, c := range order {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if err := h.episode(c, pass); err != nil {
				return nil, fmt.Errorf("%s: %s: %w", b.Name(), c, err)
			}
		}
		if Since(start) >= cfg.Duration {
			break
		}
	}
	// Quiet window: every key must make progress once the faults healed.
	h.reviveDead()
	settle := 2 * cfg.TTL
	h.sleep(settle)
	quietFrom := Mono()
	h.sleep(3 * cfg.TTL)
	// On a starved machine a healthy key can go 3 x TTL without a write, so
	// the window stretches (to 20 x TTL at most) until every key has
	// progressed: a key counts as stuck only if it makes no progress at all.
	waited := 3
	for ; waited < 20 && len(h.written(quietFrom)) < len(cfg.Keys) && ctx.Err() == nil; waited++ {
		h.sleep(cfg.TTL)
	}
	if waited > 3 {
		h.notes = append(h.notes, fmt.Sprintf("quiet window stretched to %d x TTL before every key had progressed (load %.1f)", waited, loadAvg()))
	}
	end := Mono()
	result.Seconds = float64(end-start) / 1e9
	result.Load = [2]float64{load0, loadAvg()}
	// Kill every holder without a release, then acquire each key afresh.
	for _, s := range h.allSlots() {
		if s.proc != nil {
			s.proc.Kill()
		}
	}
	final := h.finalProbe(result.TakeoverBound)

	evs, err := mergeHistories(cfg.Dir, "hist-*.jsonl", h.rec.Events())
	if err != nil {
		return nil, err
	}
	m := Check(evs, Params{TTL: cfg.TTL, QuietFrom: quietFrom, End: end, Final: final})
	result.Metrics = m
	result.Notes = h.notes
	judge(result)
	return result, nil
}

// judge decides validity and missed targets.
func judge(r *RunResult) {
	m := r.Metrics
	if r.Mutation {
		if m.StaleAccepted == 0 && m.Linearizable != "Illegal" {
			r.Missed = append(r.Missed, "mutation not caught: the fence check was disabled and no stale write was reported")
		}
		if m.PauseSaves == 0 && m.StaleAccepted == 0 {
			r.Invalid = append(r.Invalid, "no stale write was attempted under the pauses")
		}
		return
	}
	if m.Episodes["F2"] > 0 && m.PauseSaves == 0 {
		r.Invalid = append(r.Invalid, "the F2 pauses never produced a stale write attempt")
	}
	if m.Episodes["F5c"] > 0 && m.LateCleanups == 0 {
		r.Invalid = append(r.Invalid, "the F5c lost replies never let a retry win the key before the late clean-up arrived")
	}
	if n := m.DoubleByFault["F5c"]; n > 0 {
		r.Missed = append(r.Missed, fmt.Sprintf("concurrent holders under the late clean-up (F5c): %d", n))
	}
	if m.Episodes["F2"] > 0 && m.LostUpdates == 0 && m.Overlaps == 0 {
		r.Invalid = append(r.Invalid, "the unfenced control showed no violation under pauses")
	}
	if r.SafeTokens {
		if m.StaleAccepted > 0 {
			r.Missed = append(r.Missed, fmt.Sprintf("stale writes accepted: %d", m.StaleAccepted))
		}
		if m.TokenBackwards+m.TokenRepeats > 0 {
			r.Missed = append(r.Missed, fmt.Sprintf("token regressions %d, repeats %d", m.TokenBackwards, m.TokenRepeats))
		}
		if m.Linearizable == "Illegal" {
			r.Missed = append(r.Missed, "fenced register history not linearizable")
		}
	}
	if m.FalseRefusals > 0 {
		r.Missed = append(r.Missed, fmt.Sprintf("fresh writes refused: %d", m.FalseRefusals))
	}
	if m.OpsAfterLoss+m.OpsAfterDeadline > 0 {
		r.Missed = append(r.Missed, fmt.Sprintf("operations after the holder's own loss signal %d, after its deadline %d", m.OpsAfterLoss, m.OpsAfterDeadline))
	}
	if len(m.Stuck) > 0 {
		r.Missed = append(r.Missed, "stuck keys: "+strings.Join(m.Stuck, "; "))
	}
	if p99 := Quantile(m.Takeovers, 0.99); !math.IsNaN(p99) && p99 > r.TakeoverBound {
		r.Missed = append(r.Missed, fmt.Sprintf("takeover p99 %.2f x TTL above the bound %.2f", p99, r.TakeoverBound))
	}
	sort.Strings(r.Missed)
}

// loadAvg returns the 1-minute load average, 0 if unknown.
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var x float64
	_, _ = fmt.Sscanf(string(b), "%f", &x)
	return x
}

// stallThreshold is how late the harness's own 10 ms ticker must be to
// count as a machine-wide stall: the machine is shared, and a stall starves
// holders and servers alike.
const stallThreshold = 100 * time.Millisecond

// watchStalls records an EvStall whenever the harness's own 10 ms sleep
// overruns by more than stallThreshold.
func watchStalls(ctx context.Context, rec Recorder) {
	const tick = 10 * time.Millisecond
	prev := Mono()
	for ctx.Err() == nil {
		time.Sleep(tick)
		now := Mono()
		if time.Duration(now-prev) > tick+stallThreshold {
			rec.Record(Event{Kind: EvStall, T0: prev, T: now})
		}
		prev = now
	}
}
