// Package prims runs W8 and W9, the fault workloads of the primitives
// built on leases: W8, the semaphore (package semaphore, N slots), and W9,
// the read-write lock (package rwlock). Holder processes (RunHolder) take
// the primitive, perform fenced operations on the workload's resource and
// release it, while the harness pauses (F2) and kills (F3) holders and,
// where the backend can, pauses (F8) and restarts (F9) the store. The
// checks (check.Prims) are judged from the recorded history by the
// holders' own deadlines: W8, never more than N holders at once and each
// slot's tokens increasing; W9, never a reader with a writer nor two
// writers, a waiting writer gets in; both, no stale write admitted by the
// resource's fence (per slot key for W8, the sequencer for W9). The
// mutation run breaks the primitive (W8: N+1 slots; W9: writers that
// ignore readers) and disables the fence: the checks must catch it.
package prims

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/harness"
	"github.com/leasehold-go/leasehold/faults/history"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

// The workloads.
const (
	W8 = "W8" // the semaphore
	W9 = "W9" // the read-write lock
)

// Config configures one run of W8 or W9.
type Config struct {
	Backend   harness.Backend
	Open      harness.Opener
	HolderCmd []string // argv prefix of a holder, e.g. {"/path/to/faults", "prim-holder"}
	Workload  string   // W8 or W9
	Dir       string
	TTL       time.Duration // default 750 ms; raised to the store's MinTTL
	Slots     int           // W8's N; default 3
	Holders   int           // default 5 (W8: N+2 contenders; W9: 3 readers, 2 writers)
	// Duration is how long the fault schedule runs (every class once,
	// then again until it has passed); Mutation: F2 only.
	Duration time.Duration
	Mutation bool
	Seed     uint64
	Log      func(format string, a ...any)
}

type holderSlot struct {
	idx  int
	role string
	gen  int
	id   string
	proc *testserver.Process
}

type run struct {
	cfg   Config
	ctx   context.Context
	url   string
	srv   *server
	rec   *history.MemRecorder
	rng   *rand.Rand
	bound float64
	mu    sync.Mutex
	slots []*holderSlot
	procs []*testserver.Process
}

// Run runs W8 or W9 once and checks its history.
func Run(ctx context.Context, cfg Config) (res *check.PrimResult, err error) {
	if cfg.Backend == nil || cfg.Open == nil || len(cfg.HolderCmd) == 0 || cfg.Dir == "" || (cfg.Workload != W8 && cfg.Workload != W9) {
		return nil, errors.New("faults: prims.Config needs Backend, Open, HolderCmd, Dir and Workload W8 or W9")
	}
	cfg.TTL = cmpOr(cfg.TTL, 750*time.Millisecond)
	cfg.Slots = cmpOr(cfg.Slots, 3)
	cfg.Holders = cmpOr(cfg.Holders, 5)
	if err := os.MkdirAll(filepath.Join(cfg.Dir, "store"), 0o755); err != nil {
		return nil, err
	}
	r := &run{cfg: cfg, ctx: ctx, rec: history.NewMemRecorder("harness", nil), rng: rand.New(rand.NewPCG(cfg.Seed, 0x9813))}
	defer func() {
		if cerr := r.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	info, err := r.startStore()
	if err != nil {
		return nil, err
	}
	res = &check.PrimResult{Store: cfg.Backend.Name(), Workload: cfg.Workload, Seed: cfg.Seed, TTL: r.cfg.TTL, Slots: cfg.Slots,
		Mutation: cfg.Mutation, Holders: cfg.Holders, Episodes: map[string]int{}, Dir: cfg.Dir}
	r.srv = newServer(r.rec, cfg.Mutation)
	if err := r.srv.start(); err != nil {
		return nil, err
	}
	for i := range cfg.Holders {
		s := &holderSlot{idx: i, role: check.ModePermit}
		if cfg.Workload == W9 {
			s.role = check.ModeRead
			if i >= cfg.Holders-2 {
				s.role = check.ModeWrite
			}
		}
		r.slots = append(r.slots, s)
		if err := r.spawn(s); err != nil {
			return nil, err
		}
	}
	start := history.Mono()
	if err := r.schedule(start, res); err != nil {
		return nil, err
	}
	sleep(ctx, 3*r.cfg.TTL)
	res.Seconds = history.Since(start).Seconds()
	r.killAll()
	end := history.Mono()
	evs, err := history.Merge(cfg.Dir, "prim-*.jsonl", r.rec.Events())
	if err != nil {
		return nil, err
	}
	if f, err := os.Create(filepath.Join(cfg.Dir, "history.jsonl")); err == nil {
		_ = history.Write(f, evs) // the merged history, kept with -keep
		f.Close()
	}
	res.StarveBound = time.Duration((2*r.bound + 10) * float64(r.cfg.TTL))
	check.Prims(evs, end, res)
	check.JudgePrims(res, info.SafeTokens)
	return res, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

func (r *run) logf(format string, a ...any) {
	if r.cfg.Log != nil {
		r.cfg.Log(format, a...)
	}
}

// startStore starts the store, runs its migration, raises the TTL to its
// MinTTL and reads its takeover bound.
func (r *run) startStore() (leasehold.Info, error) {
	b := r.cfg.Backend
	r.logf("%s (%s): starting the store", b.Name(), r.cfg.Workload)
	if err := b.Start(r.ctx, filepath.Join(r.cfg.Dir, "store")); err != nil {
		return leasehold.Info{}, fmt.Errorf("start %s: %w", b.Name(), err)
	}
	r.url = b.URL(b.Endpoints())
	ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
	defer cancel()
	for {
		s, err := r.cfg.Open(ctx, r.url)
		if err == nil {
			defer s.Close()
			if m, ok := s.(interface{ Migrate(context.Context) error }); ok {
				if err := m.Migrate(ctx); err != nil {
					return leasehold.Info{}, fmt.Errorf("set up store %s: %w", r.url, err)
				}
			}
			info := s.Info()
			r.cfg.TTL = max(r.cfg.TTL, info.MinTTL)
			r.bound = 1 + 1.0/3
			if tb, ok := b.(harness.TakeoverBounder); ok {
				r.bound = tb.TakeoverBound(r.cfg.TTL)
			}
			return info, nil
		}
		select {
		case <-ctx.Done():
			return leasehold.Info{}, fmt.Errorf("open %s: %w", r.url, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// spawn starts slot s's next generation.
func (r *run) spawn(s *holderSlot) error {
	r.mu.Lock()
	s.gen++
	s.id = fmt.Sprintf("p%d.%d", s.idx, s.gen)
	id := s.id
	r.mu.Unlock()
	key := "sem"
	if r.cfg.Workload == W9 {
		key = "rw"
	}
	hc := HolderConfig{ID: id, URL: r.url, Resource: r.srv.url(), Role: s.role, Key: key, Slots: r.cfg.Slots,
		Broken: r.cfg.Mutation, TTL: r.cfg.TTL, Work: min(r.cfg.TTL/5, harness.MaxWork),
		History: filepath.Join(r.cfg.Dir, "prim-"+id+".jsonl"), Seed: r.cfg.Seed*100 + uint64(s.idx*10+s.gen)}
	argv := append(append([]string(nil), r.cfg.HolderCmd...), hc.Args()...)
	p := testserver.NewProcess(testserver.Spec{Name: id, Path: argv[0], Args: argv[1:], Log: filepath.Join(r.cfg.Dir, fmt.Sprintf("log-%d.txt", s.idx))})
	if err := p.Launch(); err != nil {
		return err
	}
	r.mu.Lock()
	s.proc = p
	r.procs = append(r.procs, p)
	r.mu.Unlock()
	return nil
}

// killAll kills every holder (recorded, so that their open holds end
// there) and stops the resource.
func (r *run) killAll() {
	r.mu.Lock()
	ps := r.procs
	r.procs = nil
	ids := ""
	for _, s := range r.slots {
		ids += s.id + ","
	}
	r.mu.Unlock()
	testserver.KillAll(ps...)
	r.rec.Record(history.Event{Kind: history.EvEndKill, Target: ids})
}

func (r *run) close() error {
	r.killAll()
	if r.srv != nil {
		r.srv.close()
	}
	if err := r.cfg.Backend.Close(); err != nil {
		return fmt.Errorf("stop %s: %w", r.cfg.Backend.Name(), err)
	}
	return nil
}

// primFaults describes the fault classes as W8 and W9 inject them.
var primFaults = map[string]string{
	check.F2: "holder SIGSTOP in its work step for the takeover bound + 0.5-1 x TTL",
	check.F3: "holder SIGKILL in its work step, and respawn",
	check.F8: "store SIGSTOP for 2 x TTL",
	check.F9: "store SIGKILL and restart",
}

// classes returns the fault classes that apply to the run's store.
func (r *run) classes() []string {
	if r.cfg.Mutation {
		return []string{check.F2}
	}
	cs := []string{check.F2, check.F3}
	// Not the store faults under which the store may end a grant early by
	// design (harness.GrantLoser: Redlock's F9, advisory locks' F9): the
	// primitives promise no more than their leases.
	var loses []string
	if gl, ok := r.cfg.Backend.(harness.GrantLoser); ok {
		loses = gl.LossFaults()
	}
	if _, ok := r.cfg.Backend.(harness.StorePauser); ok && !slices.Contains(loses, check.F8) {
		cs = append(cs, check.F8)
	}
	if _, ok := r.cfg.Backend.(harness.StoreRestarter); ok && !slices.Contains(loses, check.F9) {
		cs = append(cs, check.F9)
	}
	return cs
}

// schedule runs every class in an order drawn from the seed, pass after
// pass until the duration has passed since start.
func (r *run) schedule(start int64, res *check.PrimResult) error {
	classes := r.classes()
	r.logf("%s (%s): TTL %s, %d holders, faults %v", r.cfg.Backend.Name(), r.cfg.Workload, r.cfg.TTL, r.cfg.Holders, classes)
	sleep(r.ctx, 2*r.cfg.TTL) // the holders start
	for {
		r.rng.Shuffle(len(classes), func(i, j int) { classes[i], classes[j] = classes[j], classes[i] })
		for _, c := range classes {
			if r.ctx.Err() != nil {
				return r.ctx.Err()
			}
			if err := r.episode(c); err != nil {
				return fmt.Errorf("%s (%s): %s: %w", r.cfg.Backend.Name(), r.cfg.Workload, c, err)
			}
			res.Episodes[c]++
		}
		if history.Since(start) >= r.cfg.Duration {
			return nil
		}
	}
}

// target waits for a holder to begin an operation's work step (it holds
// the primitive then) and returns its slot.
func (r *run) target() (*holderSlot, error) {
	for {
		drained := false
		for !drained { // begins from before the wait are stale
			select {
			case <-r.srv.begins:
			default:
				drained = true
			}
		}
		select {
		case <-r.ctx.Done():
			return nil, r.ctx.Err()
		case id := <-r.srv.begins:
			r.mu.Lock()
			for _, s := range r.slots {
				if s.id == id {
					r.mu.Unlock()
					return s, nil
				}
			}
			r.mu.Unlock()
		case <-time.After(20*r.cfg.TTL + 10*time.Second):
			return nil, fmt.Errorf("no holder began an operation within %s (see %s)", 20*r.cfg.TTL+10*time.Second, r.cfg.Dir)
		}
	}
}

// episode injects one fault, then lets the holders settle for 2 x TTL.
func (r *run) episode(c string) error {
	T := r.cfg.TTL
	fault := func(phase, target, note string) {
		r.rec.Record(history.Event{Kind: history.EvFault, Fault: c, Phase: phase, Target: target, Note: note})
	}
	b := r.cfg.Backend
	switch c {
	case check.F2, check.F3:
		s, err := r.target()
		if err != nil {
			return err
		}
		if c == check.F2 {
			d := time.Duration((r.bound + 0.5 + 0.5*r.rng.Float64()) * float64(T))
			fault("on", s.id, "SIGSTOP "+d.Round(time.Millisecond).String())
			_ = s.proc.Signal(syscall.SIGSTOP)
			sleep(r.ctx, d)
			_ = s.proc.Signal(syscall.SIGCONT)
			fault("off", s.id, "")
			break
		}
		fault("on", s.id, "SIGKILL")
		s.proc.Kill()
		fault("off", s.id, "")
		if err := r.spawn(s); err != nil {
			return err
		}
	case check.F8:
		fault("on", b.Name(), "")
		if err := b.(harness.StorePauser).PauseStore(); err != nil {
			return err
		}
		sleep(r.ctx, 2*T)
		err := b.(harness.StorePauser).ResumeStore()
		fault("off", b.Name(), "")
		if err != nil {
			return err
		}
	case check.F9:
		rs := b.(harness.StoreRestarter)
		fault("on", b.Name(), "")
		if err := rs.KillStore(); err != nil {
			return err
		}
		sleep(r.ctx, T/2)
		err := rs.RestartStore(r.ctx, false)
		fault("off", b.Name(), "")
		if err != nil {
			return err
		}
	}
	r.logf("  %s %s", c, primFaults[c])
	sleep(r.ctx, 2*T)
	return nil
}
