package bench

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/rwlock"
	"github.com/leasehold-go/leasehold/semaphore"
)

// PrimOptions configure Prims. The zero value measures a semaphore of 10
// slots and a read-write lock against a plain cycle for 5 s, then 200
// hand-offs among 64 contenders.
type PrimOptions struct {
	// Name labels the result; default the store's Info().Name.
	Name string
	// Slots is the semaphore's N; default 10.
	Slots int
	// Duration is how long the sides cycle, one cycle of each in turn;
	// default 5 s.
	Duration time.Duration
	// Contenders is the number of clients cycling on the semaphore in the
	// hand-off measurement; default 64.
	Contenders int
	// Handoffs is the number of hand-offs to time; default 200, negative
	// for none.
	Handoffs int
	// Hold is how long each contender holds its slot; default 20 ms.
	Hold time.Duration
	// TTL of every lease; default 10 s, raised to the store's MinTTL.
	TTL time.Duration
	// MaxDuration bounds the hand-off measurement; default 60 s.
	MaxDuration time.Duration
	// OpTimeout bounds each acquire and release; default 10 s.
	OpTimeout time.Duration
	// Prefix starts every key; default a fresh NewPrefix.
	Prefix string
}

func (o PrimOptions) withDefaults(info leasehold.Info) (PrimOptions, error) {
	if o.Name == "" {
		o.Name = info.Name
	}
	if o.Slots == 0 {
		o.Slots = 10
	}
	if o.Slots < 2 || o.Slots > semaphore.MaxSlots {
		return o, fmt.Errorf("bench: %d slots: want 2 to %d", o.Slots, semaphore.MaxSlots)
	}
	o.Duration = cmp.Or(max(o.Duration, 0), 5*time.Second)
	o.Contenders = cmp.Or(max(o.Contenders, 0), 64)
	o.Handoffs = cmp.Or(o.Handoffs, 200)
	o.Hold = cmp.Or(max(o.Hold, 0), 20*time.Millisecond)
	o.MaxDuration = cmp.Or(max(o.MaxDuration, 0), time.Minute)
	o.OpTimeout = cmp.Or(max(o.OpTimeout, 0), 10*time.Second)
	o.Prefix = cmp.Or(o.Prefix, NewPrefix())
	var err error
	o.TTL, err = ttlFor(o.TTL, 10*time.Second, info)
	return o, err
}

// The sides of a PrimResult's cycles, in the order they take turns.
const (
	SidePlain   = "plain"          // Client.Acquire + Release on a key of its own
	SideSemFree = "semaphore-free" // Semaphore.Acquire + Release, no slot held
	SideSemBusy = "semaphore-busy" // the same with N-1 slots held by another client
	SideRead    = "rwlock-read"    // rwlock RLock + Release, no writer
	SideWrite   = "rwlock-write"   // rwlock Lock + Release, no reader
)

var primSides = []string{SidePlain, SideSemFree, SideSemBusy, SideRead, SideWrite}

// PrimSide is what one side of the cycles measured.
type PrimSide struct {
	Name string
	// Cycle is the median time of one of its cycles.
	Cycle time.Duration
	// OverPlain is Cycle over the plain side's Cycle, measured in turn
	// with it.
	OverPlain float64
	// Calls is the number of store calls (Acquire, Release, Holder, List)
	// per cycle.
	Calls  float64
	Cycles int64
}

// PrimResult is what Prims measured on one store.
type PrimResult struct {
	Store string
	Slots int
	Sides []PrimSide // in the order of primSides
	// Notifier reports whether the store notifies releases
	// (leasehold.Notifier): the hand-off goal applies to those.
	Notifier bool
	// Contenders cycled on a semaphore of Slots slots; Handoff is the time
	// from a holder's Release returning to the next grant of that slot (0
	// when the grant came first), AttemptsPerHandoff the store acquire
	// attempts made per hand-off (the herd a release wakes).
	Contenders         int
	Handoff            Summary
	AttemptsPerHandoff float64
	Errors             int64
	FirstError         string
	Partial            bool
}

// Side returns the side named name, and whether it was measured.
func (r PrimResult) Side(name string) (PrimSide, bool) {
	i := slices.IndexFunc(r.Sides, func(s PrimSide) bool { return s.Name == name })
	if i < 0 {
		return PrimSide{}, false
	}
	return r.Sides[i], true
}

// Prims measures the semaphore and the read-write lock on s against a
// plain lease cycle: for o.Duration one client runs one cycle of each side
// in turn, timing each (so the sides share the machine's load, and the
// medians leave out the cycles a busy machine stalled), then
// the hand-off latency of a semaphore of o.Slots slots among o.Contenders
// clients. It does not close s. Every lease is released before it returns.
func Prims(ctx context.Context, s leasehold.Store, o PrimOptions) (PrimResult, error) {
	o, err := o.withDefaults(s.Info())
	if err != nil {
		return PrimResult{}, err
	}
	_, notifies := s.(leasehold.Notifier)
	res := PrimResult{Store: o.Name, Slots: o.Slots, Notifier: notifies, Contenders: o.Contenders}
	p := &prims{o: o, ctx: ctx}
	if err := p.cycles(s, &res); err != nil {
		return res, err
	}
	if o.Handoffs > 0 && ctx.Err() == nil {
		p.handoff(s, &res)
	}
	res.Errors, res.FirstError = p.errs.n.Load(), p.errs.firstError()
	if err := ctx.Err(); err != nil {
		res.Partial = true
		return res, err
	}
	return res, nil
}

// prims is the state of one Prims measurement.
type prims struct {
	o    PrimOptions
	ctx  context.Context
	errs tally
}

// cycles runs one cycle of each side in turn for o.Duration and fills
// res.Sides.
func (p *prims) cycles(s leasehold.Store, res *PrimResult) error {
	cs, cnt := count(s)
	cl, err := leasehold.New(cs, &leasehold.Options{TTL: p.o.TTL, Label: Label, ReleaseTimeout: p.o.OpTimeout})
	if err != nil {
		return err
	}
	defer cl.Close()
	holdCl, err := leasehold.New(s, &leasehold.Options{TTL: p.o.TTL, Label: Label, ReleaseTimeout: p.o.OpTimeout})
	if err != nil {
		return err
	}
	defer holdCl.Close()
	run, cleanup, err := p.sideFuncs(cl, holdCl)
	defer cleanup()
	if err != nil {
		return err
	}
	times := make([][]time.Duration, len(primSides))
	calls := make([]int64, len(primSides))
	begin := time.Now()
	for k := 0; time.Since(begin) < p.o.Duration && p.ctx.Err() == nil; k++ {
		i := k % len(primSides)
		calls0 := cnt.calls.Load()
		octx, cancel := opContext(p.ctx, p.o.OpTimeout)
		t0 := time.Now()
		err := run[primSides[i]](octx)
		d := time.Since(t0)
		cancel()
		calls[i] += cnt.calls.Load() - calls0
		if err != nil {
			p.errs.add(primSides[i], err)
			continue
		}
		times[i] = append(times[i], d)
	}
	plain := medianDur(times[0])
	for i, side := range primSides {
		ps := PrimSide{Name: side, Cycles: int64(len(times[i])), Cycle: medianDur(times[i])}
		if plain > 0 {
			ps.OverPlain = float64(ps.Cycle) / float64(plain)
		}
		if ps.Cycles > 0 {
			ps.Calls = float64(calls[i]) / float64(ps.Cycles)
		}
		res.Sides = append(res.Sides, ps)
	}
	return nil
}

// sideFuncs returns one cycle per side, all through cl, and holds N-1 of
// the busy semaphore's slots through holdCl; cleanup releases them.
func (p *prims) sideFuncs(cl, holdCl *leasehold.Client) (map[string]func(context.Context) error, func(), error) {
	o := p.o
	try := leasehold.AcquireOptions{TTL: o.TTL}
	sem, err := semaphore.New(cl, o.Slots, &semaphore.Options{AllowUnsafeTokens: true})
	if err != nil {
		return nil, func() {}, err
	}
	rw, err := rwlock.New(cl, o.Prefix+"rw", &rwlock.Options{TTL: o.TTL})
	if err != nil {
		return nil, func() {}, err
	}
	var held []*leasehold.Lease
	cleanup := func() {
		for _, l := range held {
			rctx, cancel := opContext(p.ctx, o.OpTimeout)
			_ = l.Release(rctx)
			cancel()
		}
	}
	busy := o.Prefix + "sem-busy"
	for i := range o.Slots - 1 {
		octx, cancel := opContext(p.ctx, o.OpTimeout)
		l, err := holdCl.Acquire(octx, semaphore.SlotKey(busy, i), try)
		cancel()
		if err != nil {
			return nil, cleanup, fmt.Errorf("bench: holding slot %d of the busy semaphore: %w", i, err)
		}
		held = append(held, l)
	}
	semCycle := func(key string) func(context.Context) error {
		return func(ctx context.Context) error {
			pm, err := sem.Acquire(ctx, key, try)
			if err != nil {
				return err
			}
			return pm.Release(ctx)
		}
	}
	run := map[string]func(context.Context) error{
		SidePlain: func(ctx context.Context) error {
			l, err := cl.Acquire(ctx, o.Prefix+"plain", try)
			if err != nil {
				return err
			}
			return l.Release(ctx)
		},
		SideSemFree: semCycle(o.Prefix + "sem-free"),
		SideSemBusy: semCycle(busy),
		SideRead: func(ctx context.Context) error {
			h, err := rw.RLock(ctx, 0)
			if err != nil {
				return err
			}
			return h.Release(ctx)
		},
		SideWrite: func(ctx context.Context) error {
			h, err := rw.Lock(ctx, 0)
			if err != nil {
				return err
			}
			return h.Release(ctx)
		},
	}
	return run, cleanup, nil
}

// medianDur returns the median of ds (the upper one of an even count), 0
// for none. It sorts a copy.
func medianDur(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	c := slices.Clone(ds)
	slices.Sort(c)
	return c[len(c)/2]
}

// primID makes a store name usable in a summary id: lower case, runs of
// anything but letters and digits as one "-".
func primID(name string) string {
	var b []byte
	dash := false
	for _, r := range []byte(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b = append(b, r)
			dash = false
		case r >= 'A' && r <= 'Z':
			b = append(b, r+'a'-'A')
			dash = false
		case !dash && len(b) > 0:
			b = append(b, '-')
			dash = true
		}
	}
	if len(b) > 0 && b[len(b)-1] == '-' {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return strconv.Quote(name)
	}
	return string(b)
}
