package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold-go/leasehold"
)

// DefaultHeld returns the held-lease counts Scale measures at by default:
// 1, 1,000, 10,000 and 100,000.
func DefaultHeld() []int { return []int{1, 1000, 10000, 100000} }

// ScaleOptions configure Scale. The zero value measures at DefaultHeld
// DefaultHeld() without measuring memory.
type ScaleOptions struct {
	// Name labels the results; default the store's Info().Name.
	Name string
	// Held lists the numbers of held leases to measure at; default
	// DefaultHeld. They are measured in ascending order, each level
	// adding leases to the previous one.
	Held []int
	// Probes is the number of acquire+release cycles timed at each level;
	// default 200.
	Probes int
	// TTL of the held leases, long enough to outlast the run; default
	// 10 min, raised to the store's MinTTL and lowered to its MaxTTL.
	TTL time.Duration
	// Fillers is the number of concurrent acquirers filling the store;
	// default 16.
	Fillers int
	// Memory, if set, is read before the first fill and after each, to
	// report the memory that holds the leases.
	Memory MemProbe
	// OpTimeout bounds each store operation; default 10 s.
	OpTimeout time.Duration
	// Prefix starts every key; default a fresh NewPrefix.
	Prefix string
	// Progress, if set, is called every ProgressEvery; default 500 ms.
	Progress      func(Progress)
	ProgressEvery time.Duration
}

func (o ScaleOptions) withDefaults(info leasehold.Info) (ScaleOptions, error) {
	if o.Name == "" {
		o.Name = info.Name
	}
	if len(o.Held) == 0 {
		o.Held = DefaultHeld()
	}
	o.Held = slices.Clone(o.Held)
	slices.Sort(o.Held)
	o.Held = slices.Compact(o.Held)
	if o.Held[0] < 0 {
		return o, fmt.Errorf("bench: held-lease count %d is negative", o.Held[0])
	}
	if o.Probes <= 0 {
		o.Probes = 200
	}
	if o.TTL == 0 {
		o.TTL = 10 * time.Minute
		if info.MaxTTL > 0 && o.TTL > info.MaxTTL {
			o.TTL = info.MaxTTL
		}
	}
	var err error
	if o.TTL, err = ttlFor(o.TTL, o.TTL, info); err != nil {
		return o, err
	}
	if o.Fillers <= 0 {
		o.Fillers = 16
	}
	if o.OpTimeout <= 0 {
		o.OpTimeout = 10 * time.Second
	}
	if o.Prefix == "" {
		o.Prefix = NewPrefix()
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 500 * time.Millisecond
	}
	return o, nil
}

// Scale measures how acquire latency and memory grow with the number of
// leases held on s: for each count in o.Held it acquires leases up to that
// count (directly on the store, with o.Fillers acquirers), reads
// o.Memory, and times o.Probes acquire+release cycles of one client on a
// fresh key. A level whose fill fails is reported with its errors and
// ends the measurement. It does not close s.
//
// Every held lease is released before Scale returns, including when ctx
// ends; then the results so far are returned with the last one Partial,
// together with ctx's error. Leases that could not be released are
// reported in the error; they end with their TTL.
func Scale(ctx context.Context, s leasehold.Store, o ScaleOptions) ([]ScaleResult, error) {
	o, err := o.withDefaults(s.Info())
	if err != nil {
		return nil, err
	}
	cl, err := leasehold.New(s, &leasehold.Options{TTL: o.TTL, Label: Label, ReleaseTimeout: o.OpTimeout})
	if err != nil {
		return nil, err
	}
	defer cl.Close()

	f := &filler{s: s, o: o, owner: leasehold.NewOwnerID()}
	var results []ScaleResult
	baseline := int64(-1)
	if o.Memory != nil {
		// Open the store's connections before the baseline, so that the
		// growth of a connection pool is not charged to the leases.
		f.warm(ctx)
		if m, err := o.Memory(ctx); err == nil {
			baseline = m
		}
	}
	for _, n := range o.Held {
		if ctx.Err() != nil {
			break
		}
		r := ScaleResult{Store: o.Name, Held: n, MemBytes: -1}
		var errs tally
		t0 := time.Now()
		added := f.fill(ctx, n, &errs)
		if d := time.Since(t0); added > 0 {
			r.FillPerSec = perSec(int64(added), d)
		}
		if o.Memory != nil && errs.n.Load() == 0 {
			if m, err := o.Memory(ctx); err == nil {
				r.MemBytes = m
				if baseline >= 0 && n > 0 {
					r.MemPerLease = float64(m-baseline) / float64(n)
				}
			} else {
				errs.add("memory", err)
			}
		}
		if errs.n.Load() == 0 && ctx.Err() == nil {
			r.Acquire, r.Release, r.CyclesPerSec = probe(ctx, cl, o, n, &errs)
		}
		r.Errors, r.FirstError = errs.n.Load(), errs.firstError()
		r.Partial = ctx.Err() != nil
		results = append(results, r)
		if r.Errors > 0 {
			break
		}
	}
	rerr := f.releaseAll(ctx)
	if err := ctx.Err(); err != nil {
		if len(results) > 0 {
			results[len(results)-1].Partial = true
		}
		return results, errors.Join(err, rerr)
	}
	return results, rerr
}

// filler holds the leases of a Scale run.
type filler struct {
	s     leasehold.Store
	o     ScaleOptions
	owner string

	mu     sync.Mutex
	grants []held // the key is the index's, the owner f.owner
}

// held is what a release needs of a grant besides its key and owner, kept
// small so that the run's own memory per lease (about 40 bytes) stays well
// below a store's when the store lives in this process.
type held struct {
	token   uint64
	ttl     time.Duration
	private any
	index   int64
}

func (f *filler) key(i int64) string { return fmt.Sprintf("%sheld/%07d", f.o.Prefix, i) }

func (f *filler) grant(h held) leasehold.Grant {
	return leasehold.Grant{Key: f.key(h.index), Owner: f.owner, Label: Label, Token: h.token, TTL: h.ttl, Private: h.private}
}

func (f *filler) held() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.grants)
}

// fill acquires leases until n are held, ctx ends or an acquire fails, and
// returns how many it added.
func (f *filler) fill(ctx context.Context, n int, errs *tally) int {
	start := f.held()
	if start >= n {
		return 0
	}
	var next atomic.Int64
	next.Store(int64(start))
	begin := time.Now()
	if f.o.Progress != nil {
		stop := ticker(f.o.ProgressEvery, func() {
			f.o.Progress(Progress{Store: f.o.Name, Clients: n, Phase: "fill", Elapsed: time.Since(begin),
				Done: int64(f.held()), Target: int64(n), Errors: errs.n.Load()})
		})
		defer stop()
	}
	var wg sync.WaitGroup
	for range min(f.o.Fillers, n-start) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && errs.n.Load() == 0 {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				octx, cancel := opContext(ctx, f.o.OpTimeout)
				g, err := f.s.Acquire(octx, leasehold.AcquireRequest{Key: f.key(i), Owner: f.owner, Label: Label, TTL: f.o.TTL})
				cancel()
				if err != nil {
					errs.add(fmt.Sprintf("acquire held lease %d", i+1), err)
					return
				}
				f.mu.Lock()
				f.grants = append(f.grants, held{token: g.Token, ttl: g.TTL, private: g.Private, index: i})
				f.mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return f.held() - start
}

// warm runs a few acquire+release cycles on each of o.Fillers goroutines
// at once, as the fill will, so that the store's connections are open.
// Errors are left for the fill to find.
func (f *filler) warm(ctx context.Context) {
	var wg sync.WaitGroup
	for g := range f.o.Fillers {
		wg.Go(func() {
			for i := range 3 {
				octx, cancel := opContext(ctx, f.o.OpTimeout)
				gr, err := f.s.Acquire(octx, leasehold.AcquireRequest{
					Key: fmt.Sprintf("%swarm/%d/%d", f.o.Prefix, g, i), Owner: f.owner, Label: Label, TTL: f.o.TTL})
				if err == nil {
					_ = f.s.Release(octx, gr)
				}
				cancel()
				if err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
}

// releaseAll releases every held lease, even after ctx has ended.
func (f *filler) releaseAll(ctx context.Context) error {
	f.mu.Lock()
	gs := f.grants
	f.grants = nil
	f.mu.Unlock()
	if len(gs) == 0 {
		return nil
	}
	var next, done atomic.Int64
	var errs tally
	begin := time.Now()
	if f.o.Progress != nil {
		stop := ticker(f.o.ProgressEvery, func() {
			f.o.Progress(Progress{Store: f.o.Name, Clients: len(gs), Phase: "release", Elapsed: time.Since(begin),
				Done: done.Load(), Target: int64(len(gs)), Errors: errs.n.Load()})
		})
		defer stop()
	}
	var wg sync.WaitGroup
	for range min(f.o.Fillers, len(gs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(len(gs)) {
					return
				}
				octx, cancel := opContext(ctx, f.o.OpTimeout)
				err := f.s.Release(octx, f.grant(gs[i]))
				cancel()
				if err != nil {
					errs.add("release held lease", err)
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := errs.n.Load(); n > 0 {
		return fmt.Errorf("bench: %d of %d held leases were not released (they end with their TTL of %s); the first: %s",
			n, len(gs), f.o.TTL, errs.firstError())
	}
	return nil
}

// probe times o.Probes acquire+release cycles of one client on a fresh key.
func probe(ctx context.Context, cl *leasehold.Client, o ScaleOptions, held int, errs *tally) (Summary, Summary, float64) {
	key := fmt.Sprintf("%sprobe/%d", o.Prefix, held)
	acq := make([]time.Duration, 0, o.Probes)
	rel := make([]time.Duration, 0, o.Probes)
	begin := time.Now()
	if o.Progress != nil {
		stop := ticker(o.ProgressEvery, func() {
			o.Progress(Progress{Store: o.Name, Clients: held, Phase: "probe", Elapsed: time.Since(begin),
				Target: int64(o.Probes), Errors: errs.n.Load()})
		})
		defer stop()
	}
	var busy time.Duration
	for i := 0; i <= o.Probes && ctx.Err() == nil; i++ {
		t0 := time.Now()
		octx, cancel := opContext(ctx, o.OpTimeout)
		l, err := cl.Acquire(octx, key, leasehold.AcquireOptions{})
		cancel()
		t1 := time.Now()
		if err != nil {
			errs.add("probe acquire", err)
			return Summarize(acq), Summarize(rel), 0
		}
		err = l.Release(ctx)
		t2 := time.Now()
		if err != nil {
			errs.add("probe release", err)
			return Summarize(acq), Summarize(rel), 0
		}
		if i == 0 {
			continue // the first cycle warms the key up
		}
		acq = append(acq, t1.Sub(t0))
		rel = append(rel, t2.Sub(t1))
		busy += t2.Sub(t0)
	}
	return Summarize(acq), Summarize(rel), perSec(int64(len(acq)), busy)
}
