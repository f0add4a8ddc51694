package harness

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/leasehold-go/leasehold/internal/testserver"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/clock"
	"github.com/leasehold-go/leasehold/faults/history"
	"github.com/leasehold-go/leasehold/faults/proxy"
	"github.com/leasehold-go/leasehold/faults/resource"
)

// slot is one holder process, respawned as generations (ids "h<idx>.<gen>").
type slot struct {
	idx     int
	gen     int
	rate    float64
	long    bool   // holds each key until it loses it
	shift   string // its wall-clock offset file (F17): run as cfg.WallHolderCmd
	proxies []*proxy.Proxy
	proc    *testserver.Process
	id      string
}

// harness is the state of one Run.
type harness struct {
	cfg        RunConfig
	ctx        context.Context
	rec        *history.MemRecorder
	res        *resource.Server
	rng        *rand.Rand
	url        string
	slots      []*slot
	extra      *slot // the extra holder's slot (F12, F12b, F9m, F17)
	reads      chan history.Event
	procs      procSet
	notes      []string
	invalid    []string      // faults that did not bite, and how (the run proves nothing then)
	bound      float64       // takeover bound, x TTL
	pass       int           // the schedule's current pass
	longPaused map[int]bool  // passes that had their long F2 pause
	probeGrace time.Duration // the final probe's grace for a store that does not answer (0: probeGrace)

	mu sync.Mutex
}

func (h *harness) logf(format string, a ...any) {
	if h.cfg.Log != nil {
		h.cfg.Log(format, a...)
	}
}

// allSlots returns the regular slots and the extra one.
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

func (h *harness) note(class, why string) {
	h.remark(class + " (" + check.Describe(class) + "): not run: " + why)
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

func (h *harness) sleep(d time.Duration) {
	sleepCtx(h.ctx, d)
}

// halt stops s's holder (SIGTERM, SIGKILL after 2 s), recording the halt
// first (check.HaltMark): the releases the holder sends on its way out may
// take effect without a record of their return.
func (h *harness) halt(s *slot) {
	h.rec.Record(history.Event{Kind: history.EvMark, Target: s.id, Note: check.HaltMark})
	s.proc.Halt(syscall.SIGTERM, 2*time.Second)
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
	if hu, ok := h.cfg.Backend.(HolderURLer); ok && len(eps) > 0 {
		url = hu.HolderURL(s.idx, eps)
	} else if len(eps) > 0 {
		url = h.cfg.Backend.URL(eps)
	}
	hc := HolderConfig{
		ID: s.id, URL: url, Resource: h.res.URL(), Keys: h.cfg.Keys, TTL: h.cfg.TTL,
		Work: h.work(), Gap: h.gap(), OpsMin: h.cfg.OpsMin, OpsMax: h.cfg.OpsMax, Rate: s.rate,
		History: filepath.Join(h.cfg.Dir, "hist-"+s.id+".jsonl"),
		Seed:    h.cfg.Seed*1000 + uint64(s.idx)*10 + uint64(s.gen),
	}
	if s.long {
		// The extra holder keeps its key until it loses it, so that it is
		// still working when its renewals start failing.
		hc.OpsMin, hc.OpsMax = 1000, 1000
	}
	argv := append(append([]string(nil), h.cfg.HolderCmd...), hc.Args()...)
	env := h.cfg.HolderEnv
	if s.shift != "" {
		argv = append(append([]string(nil), h.cfg.WallHolderCmd...), hc.Args()...)
		env = append(append([]string(nil), env...), clock.GoShiftEnv+"="+s.shift)
	}
	p, err := startProc(s.id, argv, env, filepath.Join(h.cfg.Dir, "log-"+s.id+".txt"))
	if err != nil {
		return err
	}
	h.procs.add(p)
	s.proc = p
	h.rec.Record(history.Event{Kind: history.EvMark, Target: s.id, Note: "spawn"})
	return nil
}

// reviveDead respawns holders that exited on their own (which they should
// never do), noting it.
func (h *harness) reviveDead() {
	for _, s := range h.slots {
		if s.proc != nil && !s.proc.Running() {
			h.notes = append(h.notes, fmt.Sprintf("holder %s exited on its own: %s", s.id, tail(filepath.Join(h.cfg.Dir, "log-"+s.id+".txt"))))
			_ = h.spawn(s)
		}
	}
}

// written returns the keys with an admitted fenced write at or after the
// monotonic time since.
func (h *harness) written(since int64) map[string]bool {
	seen := map[string]bool{}
	for _, e := range h.rec.Events() {
		if e.Kind == history.EvAdmit && e.T >= since {
			seen[e.Key] = true
		}
	}
	return seen
}

// fencedSince reports whether holder id made a write the fence refused at
// or after the monotonic time since.
func (h *harness) fencedSince(id string, since int64) bool {
	for _, e := range h.rec.Events() {
		if e.Kind == history.EvFenced && e.Target == id && e.T >= since {
			return true
		}
	}
	return false
}

// warmUpLimit bounds the wait for every one of n keys to see a first
// fenced write: 10 x TTL + 20 s, and a TTL more per key (at load 50, a
// long run's 32 keys on S3 were not all written within 30 s: the holders
// start on every key at once, and a store's acquire costs several
// requests).
func warmUpLimit(ttl time.Duration, n int) time.Duration {
	return 10*ttl + 20*time.Second + time.Duration(n)*ttl
}

// warmUp waits until every key has seen an admitted fenced write.
func (h *harness) warmUp() error {
	limit := warmUpLimit(h.cfg.TTL, len(h.cfg.Keys))
	deadline := time.Now().Add(limit)
	for {
		seen := h.written(0)
		if len(seen) == len(h.cfg.Keys) {
			return nil
		}
		for _, s := range h.slots {
			if !s.proc.Running() {
				return fmt.Errorf("holder %s exited during warm-up: %s", s.id, tail(filepath.Join(h.cfg.Dir, "log-"+s.id+".txt")))
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no holder got to write every key within %s (keys written: %v); see %s", limit, seen, h.cfg.Dir)
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
				if s.id == e.Target && s.proc != nil && s.proc.Running() {
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
	h.rec.Record(history.Event{Kind: history.EvFault, Fault: class, Phase: phase, Target: target, Note: note})
}

// work is the holders' work step: the configured one, or DefaultWork of
// the run's TTL (raised to the store's MinTTL by then).
func (h *harness) work() time.Duration {
	if h.cfg.Work > 0 {
		return h.cfg.Work
	}
	return DefaultWork(h.cfg.TTL)
}

// gap is the holders' longest pause between holds, like work.
func (h *harness) gap() time.Duration {
	if h.cfg.Gap > 0 {
		return h.cfg.Gap
	}
	return DefaultGap(h.cfg.TTL)
}

func (h *harness) ttlx(f float64) time.Duration {
	return time.Duration(f * float64(h.cfg.TTL))
}
