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
	"syscall"
	"time"

	"github.com/leasehold-go/leasehold"
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
}

// FaultClasses are every fault class, in the order of the matrix.
var FaultClasses = []string{"F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9", "F9b", "F9m", "F10", "F11", "F12"}

// FaultNames describes each class.
var FaultNames = map[string]string{
	"F1":  "holder SIGSTOP for 0.3 x TTL",
	"F2":  "holder SIGSTOP for 1-3 x TTL, and once per pass for the takeover bound + 1-1.5 x TTL",
	"F3":  "holder SIGKILL and respawn",
	"F4":  "replies delayed by 1.5 x TTL",
	"F5":  "replies dropped after the store applied the request",
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
	end := Mono()
	result.Seconds = float64(end-start) / 1e9
	// Kill every holder without a release, then acquire each key afresh.
	for _, s := range h.allSlots() {
		if s.proc != nil {
			s.proc.Kill()
		}
	}
	final := h.finalProbe(result.TakeoverBound)

	evs := h.rec.Events()
	hist, err := filepath.Glob(filepath.Join(cfg.Dir, "hist-*.jsonl"))
	if err != nil {
		return nil, err
	}
	for _, f := range hist {
		he, err := ReadHistoryFile(f)
		if err != nil {
			return nil, err
		}
		evs = append(evs, he...)
	}
	SortHistory(evs)
	if f, err := os.Create(filepath.Join(cfg.Dir, "history.jsonl")); err == nil {
		_ = WriteHistory(f, evs)
		f.Close()
	}
	m := Check(evs, Params{TTL: cfg.TTL, QuietFrom: quietFrom, End: end, Final: final})
	result.Metrics = m
	result.Notes = h.notes
	judge(result)
	return result, nil
}

func (h *harness) allSlots() []*slot {
	out := append([]*slot(nil), h.slots...)
	if h.extra != nil {
		out = append(out, h.extra)
	}
	return out
}

// probeInfo opens the store directly once: it must answer, and it tells
// the store's bounds and claims.
func (h *harness) probeInfo() (leasehold.Info, error) {
	ctx, cancel := context.WithTimeout(h.ctx, 30*time.Second)
	defer cancel()
	var s leasehold.Store
	var err error
	for {
		// A server that just started may still refuse ("starting up").
		s, err = h.cfg.Open(ctx, h.url)
		if err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return leasehold.Info{}, fmt.Errorf("open %s: %w", h.url, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	defer s.Close()
	if m, ok := s.(interface{ Migrate(context.Context) error }); ok {
		if err := m.Migrate(ctx); err != nil {
			return leasehold.Info{}, fmt.Errorf("set up store %s: %w", h.url, err)
		}
	}
	if _, err := s.Holder(ctx, h.cfg.Keys[0]); err != nil && !errors.Is(err, leasehold.ErrNotHeld) {
		return leasehold.Info{}, fmt.Errorf("store %s does not answer: %w", h.url, err)
	}
	return s.Info(), nil
}

// finalProbe acquires every key from the harness after all holders died
// without releasing: each must be free within the takeover bound plus
// slack. Its grants join the history for the token checks.
func (h *harness) finalProbe(bound float64) map[string]error {
	out := map[string]error{}
	ctx, cancel := context.WithTimeout(h.ctx, 30*time.Second)
	defer cancel()
	s, err := h.cfg.Open(ctx, h.url)
	if err != nil {
		for _, k := range h.cfg.Keys {
			out[k] = fmt.Errorf("open store: %w", err)
		}
		return out
	}
	defer s.Close()
	ws, _ := WrapStore(s, h.rec)
	c, err := leasehold.New(ws, &leasehold.Options{TTL: h.cfg.TTL, Label: "harness",
		Backoff: leasehold.ExpBackoff{Base: 5 * time.Millisecond, Cap: max(h.cfg.TTL/10, 10*time.Millisecond)}})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	// Polls with single attempts rather than waiting through the client:
	// the probe asks whether the key is free, not how the client waits.
	wait := time.Duration(bound*float64(h.cfg.TTL)) + h.cfg.TTL + time.Second
	for _, k := range h.cfg.Keys {
		deadline := time.Now().Add(wait)
		for {
			l, err := c.Acquire(ctx, k, leasehold.AcquireOptions{})
			if err == nil {
				out[k] = nil
				_ = l.Release(ctx)
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				out[k] = fmt.Errorf("not acquired within %s after every holder died: %w", wait, err)
				break
			}
			sleepCtx(ctx, max(h.cfg.TTL/20, 5*time.Millisecond))
		}
	}
	return out
}

// classes returns the fault classes to run on this store.
func (h *harness) classes() []string {
	if h.cfg.Mutation {
		return []string{"F2", "F2", "F2"}
	}
	b := h.cfg.Backend
	_, pauser := b.(StorePauser)
	_, restarter := b.(StoreRestarter)
	w, wiper := b.(Wiper)
	_, leader := b.(LeaderKiller)
	_, majority := b.(MajorityStore)
	stepper := false
	stepNote := ""
	if cs, ok := b.(ClockStepper); ok {
		stepper, stepNote = cs.CanStepClock()
	}
	net := len(b.Endpoints()) > 0
	var out []string
	for _, c := range FaultClasses {
		ok := true
		switch c {
		case "F4", "F5", "F7":
			ok = net
		case "F8":
			ok = pauser
		case "F9b":
			ok = restarter && wiper && w.WipeMeaningful()
		case "F9m":
			ok = majority
		case "F10":
			ok = leader
		case "F11":
			ok = stepper
		}
		if len(h.cfg.Faults) > 0 {
			ok = ok && containsStr(h.cfg.Faults, c)
		}
		if ok {
			if c == "F11" && stepNote != "" {
				h.remark(stepNote)
			}
			out = append(out, c)
			if c == "F2" && len(h.cfg.Faults) == 0 {
				out = append(out, "F2") // two pauses per pass: pauses are what fencing is for
			}
			continue
		}
		if len(h.cfg.Faults) == 0 || containsStr(h.cfg.Faults, c) {
			why := notApplicable(c, b, restarter)
			if c == "F11" && stepNote != "" {
				why = stepNote
			}
			h.note(c, why)
		}
	}
	return out
}

func notApplicable(c string, b Backend, restarter bool) string {
	switch c {
	case "F4", "F5", "F7":
		return "the store has no network"
	case "F8":
		return "the store has no server process to pause"
	case "F9b":
		if !restarter {
			return "the store has no server process to restart"
		}
		if n, ok := b.(interface{ WipeNote() string }); ok {
			return n.WipeNote()
		}
		return "the store keeps its data across a restart by design"
	case "F9m":
		return "the store has no independent masters"
	case "F10":
		return "the store has no leader to kill"
	case "F11":
		return "no way to step this store's clock without stepping the host's"
	}
	return "not supported"
}

func (h *harness) note(class, why string) {
	h.remark(class + " (" + FaultNames[class] + "): not run: " + why)
}

// remark adds a note to the run's result, once.
func (h *harness) remark(n string) {
	for _, x := range h.notes {
		if x == n {
			return
		}
	}
	h.notes = append(h.notes, n)
}

func containsStr(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func (h *harness) sleep(d time.Duration) {
	sleepCtx(h.ctx, d)
}

// spawn starts a new generation of s's holder.
func (h *harness) spawn(s *slot) error {
	h.mu.Lock()
	s.gen++
	s.id = fmt.Sprintf("h%d.%d", s.idx, s.gen)
	h.mu.Unlock()
	eps := make([]string, len(s.proxies))
	for i, p := range s.proxies {
		eps[i] = p.Addr()
	}
	url := h.url
	if len(eps) > 0 {
		url = h.cfg.Backend.URL(eps)
	}
	hc := HolderConfig{
		ID: s.id, URL: url, Resource: h.res.URL(), Keys: h.cfg.Keys, TTL: h.cfg.TTL,
		Work: h.cfg.TTL / 5, OpsMin: 2, OpsMax: 6, Rate: s.rate,
		History: filepath.Join(h.cfg.Dir, "hist-"+s.id+".jsonl"),
		Seed:    h.cfg.Seed*1000 + uint64(s.idx)*10 + uint64(s.gen),
	}
	if s.long {
		// The extra holder keeps its key until it loses it, so that it is
		// still working when its renewals start failing.
		hc.OpsMin, hc.OpsMax = 1000, 1000
	}
	argv := append(append([]string(nil), h.cfg.HolderCmd...), hc.Args()...)
	p, err := StartProc(ProcSpec{Name: s.id, Argv: argv, Env: h.cfg.HolderEnv, Log: filepath.Join(h.cfg.Dir, "log-"+s.id+".txt")})
	if err != nil {
		return err
	}
	h.procs.Add(p)
	s.proc = p
	h.rec.Record(Event{Kind: EvMark, Target: s.id, Note: "spawn"})
	return nil
}

// reviveDead respawns holders that exited on their own (which they should
// never do), noting it.
func (h *harness) reviveDead() {
	for _, s := range h.slots {
		if s.proc != nil && s.proc.Exited() {
			h.notes = append(h.notes, fmt.Sprintf("holder %s exited on its own: %s", s.id, tail(filepath.Join(h.cfg.Dir, "log-"+s.id+".txt"))))
			_ = h.spawn(s)
		}
	}
}

// warmUp waits until every key has seen an admitted fenced write.
func (h *harness) warmUp() error {
	deadline := time.Now().Add(10*h.cfg.TTL + 20*time.Second)
	for {
		seen := map[string]bool{}
		for _, e := range h.rec.Events() {
			if e.Kind == EvAdmit {
				seen[e.Key] = true
			}
		}
		if len(seen) == len(h.cfg.Keys) {
			return nil
		}
		for _, s := range h.slots {
			if s.proc.Exited() {
				return fmt.Errorf("holder %s exited during warm-up: %s", s.id, tail(filepath.Join(h.cfg.Dir, "log-"+s.id+".txt")))
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no holder got to write every key within %s (keys written: %v); see %s", 10*h.cfg.TTL+20*time.Second, seen, h.cfg.Dir)
		}
		h.sleep(50 * time.Millisecond)
		if h.ctx.Err() != nil {
			return h.ctx.Err()
		}
	}
}

// reader waits for the next read of the W1 counter by a holder of the
// given slots (nil: the regular slots), so that a fault hits a holder that
// holds a key and is in the middle of an operation.
func (h *harness) reader(among []*slot, timeout time.Duration) *slot {
	if among == nil {
		among = h.slots
	}
	for {
		select {
		case <-h.reads:
			continue
		default:
		}
		break
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case e := <-h.reads:
			for _, s := range among {
				if s.id == e.Target && s.proc != nil && !s.proc.Exited() {
					return s
				}
			}
		case <-t.C:
			return nil
		case <-h.ctx.Done():
			return nil
		}
	}
}

func (h *harness) fault(class, target, phase, note string) {
	h.rec.Record(Event{Kind: EvFault, Fault: class, Phase: phase, Target: target, Note: note})
}

func (h *harness) ttlx(f float64) time.Duration {
	return time.Duration(f * float64(h.cfg.TTL))
}

// episode injects one fault of class c and lets the system recover.
func (h *harness) episode(c string, pass int) error {
	h.reviveDead()
	T := h.cfg.TTL
	recover := h.ttlx(1.5)
	pick := func() (*slot, error) {
		s := h.reader(nil, 10*T+5*time.Second)
		if s == nil {
			return nil, fmt.Errorf("no holder read the counter for %s: the holders are not making progress (see %s)", 10*T+5*time.Second, h.cfg.Dir)
		}
		return s, nil
	}
	h.logf("  %s %s", c, FaultNames[c])
	switch c {
	case "F1", "F2":
		f := 0.3
		if c == "F2" {
			f = 1 + 2*h.rng.Float64()
			if h.cfg.Mutation || h.longPause[pass] == false {
				// One pause per pass outlasts the store's takeover bound by
				// a TTL or more, so that another holder surely takes the key
				// and writes meanwhile: the fault must bite.
				h.longPause[pass] = true
				f = h.bound + 1 + 0.5*h.rng.Float64()
			}
		}
		s, err := pick()
		if err != nil {
			return err
		}
		_ = s.proc.Signal(syscall.SIGSTOP)
		h.fault(c, s.id, "on", fmt.Sprintf("SIGSTOP %.2f x TTL", f))
		h.sleep(h.ttlx(f))
		_ = s.proc.Signal(syscall.SIGCONT)
		h.fault(c, s.id, "off", "SIGCONT")
		h.sleep(recover)
	case "F3":
		s, err := pick()
		if err != nil {
			return err
		}
		h.fault(c, s.id, "on", "SIGKILL")
		s.proc.Kill()
		h.fault(c, s.id, "off", "")
		if err := h.spawn(s); err != nil {
			return err
		}
		h.sleep(2 * T)
	case "F4", "F5", "F6", "F7", "F12":
		return h.netFault(c)
	case "F8":
		p := h.cfg.Backend.(StorePauser)
		h.fault(c, "store", "on", "SIGSTOP")
		if err := p.PauseStore(); err != nil {
			return err
		}
		h.sleep(2 * T)
		if err := p.ResumeStore(); err != nil {
			return err
		}
		h.fault(c, "store", "off", "SIGCONT")
		h.sleep(2 * T)
	case "F9", "F9b":
		r, ok := h.cfg.Backend.(StoreRestarter)
		if !ok {
			// The embedded store: kill every process using the file at once.
			var ids []string
			for _, s := range h.slots {
				ids = append(ids, s.id)
			}
			h.fault(c, strings.Join(ids, ","), "on", "SIGKILL of every holder")
			for _, s := range h.slots {
				s.proc.Kill()
			}
			h.fault(c, strings.Join(ids, ","), "off", "")
			for _, s := range h.slots {
				if err := h.spawn(s); err != nil {
					return err
				}
			}
			h.sleep(2 * T)
			return nil
		}
		h.fault(c, "store", "on", "SIGKILL")
		if err := r.KillStore(); err != nil {
			return err
		}
		h.sleep(T / 2)
		if err := r.RestartStore(h.ctx, c == "F9b"); err != nil {
			return fmt.Errorf("restart the store: %w", err)
		}
		h.fault(c, "store", "off", "restarted")
		h.sleep(2 * T)
	case "F9m":
		return h.splitMajority()
	case "F10":
		lk := h.cfg.Backend.(LeaderKiller)
		node, err := lk.KillLeader(h.ctx)
		if err != nil {
			return err
		}
		h.fault(c, node, "on", "leader SIGKILL")
		h.sleep(2 * T)
		if err := lk.RestartNode(h.ctx, node); err != nil {
			return err
		}
		h.fault(c, node, "off", "restarted")
		h.sleep(2 * T)
	case "F11":
		cs := h.cfg.Backend.(ClockStepper)
		d := 3 * T
		h.fault(c, "store", "on", "clock +"+d.String())
		if err := cs.StepClock(d); err != nil {
			return err
		}
		h.sleep(2 * T)
		h.fault(c, "store", "off", "")
		h.sleep(recover)
	default:
		return fmt.Errorf("unknown fault class %s", c)
	}
	return nil
}

// splitMajority is the Redlock failure Kleppmann describes: a holder of a
// key is cut off from master 2; once master 2's copy of its key has
// expired (one TTL), master 0 is killed and restarted without its data.
// Now only master 1 knows the holder, who still believes in its lease
// until its next renewal fails, while any other client wins masters 0 and
// 2: two holders at once.
func (h *harness) splitMajority() error {
	T := h.cfg.TTL
	ms := h.cfg.Backend.(MajorityStore)
	x := h.extra
	x.rate, x.long = 1, true
	if err := h.spawn(x); err != nil {
		return err
	}
	defer x.proc.Stop(syscall.SIGTERM, 2*time.Second)
	if h.reader([]*slot{x}, 20*T+5*time.Second) == nil {
		h.remark("F9m: in some episodes the extra holder never got a key")
		return nil
	}
	h.fault("F9m", x.id, "on", "cut from master 2")
	cut := Mono()
	x.proxies[2].Partition()
	defer x.proxies[2].Heal()
	// Wait until master 2's copy of the key has expired while the holder
	// renewed on masters 0 and 1.
	h.sleep(T + T/4)
	if h.reader([]*slot{x}, 2*T) == nil || !h.renewedSince(x, cut+int64(T)) {
		h.remark("F9m: in some episodes the holder did not keep its key on masters 0 and 1 while cut from master 2 (its grant did not include both), so master 0 was not restarted")
		h.fault("F9m", x.id, "off", "not set up")
		return nil
	}
	ms.KillMaster(0)
	if err := ms.RestartMaster(h.ctx, 0); err != nil {
		return fmt.Errorf("restart master 0: %w", err)
	}
	h.rec.Record(Event{Kind: EvMark, Target: x.id, Note: "master 0 restarted empty"})
	h.sleep(2 * T)
	x.proxies[2].Heal()
	h.fault("F9m", x.id, "off", "healed")
	h.sleep(h.ttlx(1.5))
	return nil
}

// renewedSince reports whether holder s had a successful renewal sent
// after t (from its history file).
func (h *harness) renewedSince(s *slot, t int64) bool {
	evs, _ := ReadHistoryFile(filepath.Join(h.cfg.Dir, "hist-"+s.id+".jsonl"))
	for _, e := range evs {
		if e.Kind == EvStoreRenew && e.Err == "" && e.T0 > t {
			return true
		}
	}
	return false
}

// netFault injects a network fault on one holder's link to the store:
// through its proxies, or (no network) through its in-process cut.
func (h *harness) netFault(c string) error {
	T := h.cfg.TTL
	var s *slot
	if c == "F12" {
		// A holder whose clock runs 40% slow, far beyond the client's Rho:
		// while it cannot renew it believes in its lease for 1/0.6 of the
		// time the store keeps it.
		h.extra.rate, h.extra.long = 0.6, true
		if err := h.spawn(h.extra); err != nil {
			return err
		}
		s = h.reader([]*slot{h.extra}, 20*T+5*time.Second)
		if s == nil {
			h.extra.proc.Stop(syscall.SIGTERM, 2*time.Second)
			h.remark("F12: in some episodes the slow-clock holder never got a key")
			return nil
		}
	} else {
		s = h.reader(nil, 10*T+5*time.Second)
		if s == nil {
			return fmt.Errorf("no holder read the counter for %s (see %s)", 10*T+5*time.Second, h.cfg.Dir)
		}
	}
	cut := func(on bool) {
		if len(s.proxies) == 0 {
			sig := syscall.SIGUSR2
			if on {
				sig = syscall.SIGUSR1
			}
			_ = s.proc.Signal(sig)
			return
		}
		for _, p := range s.proxies {
			if on {
				p.Partition()
			} else {
				p.Heal()
			}
		}
	}
	switch c {
	case "F4":
		h.fault(c, s.id, "on", "reply latency 1.5 x TTL")
		for _, p := range s.proxies {
			p.SetLatency(h.ttlx(1.5))
		}
		h.sleep(h.ttlx(2.5))
		for _, p := range s.proxies {
			p.SetLatency(0)
		}
	case "F5":
		h.fault(c, s.id, "on", "drop replies")
		for _, p := range s.proxies {
			p.SetDropReplies(true)
		}
		h.sleep(2 * T)
		for _, p := range s.proxies {
			p.SetDropReplies(false)
		}
	case "F6", "F12":
		h.fault(c, s.id, "on", "partition")
		cut(true)
		h.sleep(2 * T)
		cut(false)
	case "F7":
		h.fault(c, s.id, "on", "resets")
		for end := time.Now().Add(2 * T); time.Now().Before(end) && h.ctx.Err() == nil; {
			for _, p := range s.proxies {
				p.ResetAll()
			}
			h.sleep(T / 4)
		}
	}
	h.fault(c, s.id, "off", "")
	if c == "F12" {
		h.sleep(T)
		h.extra.proc.Stop(syscall.SIGTERM, 2*time.Second)
	}
	h.sleep(h.ttlx(1.5))
	return nil
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
