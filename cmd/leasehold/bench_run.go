package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/leasehold-go/leasehold/bench"
)

// runBench measures every target as p says and prints the results.
func (a *app) runBench(ctx context.Context, p *benchPlan) int {
	r := &benchRun{a: a, p: p, prog: newProgress(a.stderr)}
	r.emit(p.previous)
	r.measure(ctx)
	interrupted := ctx.Err() != nil
	if interrupted {
		fmt.Fprintln(a.stderr, "leasehold bench: interrupted; these are the figures measured so far")
	}
	code := exitOK
	if !p.prims || p.cycles || len(p.scale) > 0 || len(p.herd) > 0 || len(p.previous.Cycles)+len(p.previous.Scale)+len(p.previous.Herd)+len(p.previous.References) > 0 {
		code = a.benchReport(p, r.fresh, interrupted)
	} else if interrupted {
		code = exitInterrupted
	}
	if p.prims {
		if c := r.reportPrims(); code == exitOK {
			code = c
		}
	}
	return code
}

// benchRun is one run of the measurements of a plan.
type benchRun struct {
	a     *app
	p     *benchPlan
	prog  *progress
	fresh bench.Report // what the run measured
	prims []bench.PrimResult
}

// emit prints rep as JSON lines with --json.
func (r *benchRun) emit(rep bench.Report) {
	if r.p.asJSON {
		if err := bench.WriteJSON(r.a.stdout, rep); err != nil {
			fmt.Fprintf(r.a.stderr, "leasehold bench: %v\n", err)
		}
	}
}

// measure measures each target in turn: the cycles, then the scale, then
// the herd, as the plan asks. It stops when a measurement fails outright
// or ctx ends.
func (r *benchRun) measure(ctx context.Context) {
	for _, t := range r.p.targets {
		if !r.cycles(ctx, t) || !r.scale(ctx, t) || !r.herd(ctx, t) || !r.prim(ctx, t) {
			return
		}
	}
}

// cycles measures t's cycles with each number of clients, and reports
// whether to go on.
func (r *benchRun) cycles(ctx context.Context, t benchTarget) bool {
	if !r.p.cycles {
		return true
	}
	for _, n := range r.p.clients {
		res, err := bench.Run(ctx, t.st, bench.Options{
			Name: t.name, Clients: n, Duration: r.p.duration, Keys: r.p.keys, HandoffRounds: r.p.handoffs,
			Progress: r.prog.report, ProgressEvery: r.prog.every,
		})
		r.prog.clear()
		if err != nil && !res.Partial {
			fmt.Fprintf(r.a.stderr, "leasehold bench: %s: %s\n", t.name, message(err))
			return false
		}
		r.fresh.Cycles = append(r.fresh.Cycles, res)
		r.emit(bench.Report{Cycles: []bench.Result{res}})
		if ctx.Err() != nil {
			return false
		}
	}
	return true
}

// scale measures t with each number of held leases, and reports whether
// to go on: a failed scale measurement is printed, and the others go on.
func (r *benchRun) scale(ctx context.Context, t benchTarget) bool {
	if len(r.p.scale) == 0 {
		return true
	}
	rs, err := bench.Scale(ctx, t.st, bench.ScaleOptions{
		Name: t.name, Held: r.p.scale, Probes: r.p.probes, Memory: r.p.memory(t),
		Progress: r.prog.report, ProgressEvery: r.prog.every,
	})
	r.prog.clear()
	r.fresh.Scale = append(r.fresh.Scale, rs...)
	r.emit(bench.Report{Scale: rs})
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(r.a.stderr, "leasehold bench: %s: %s\n", t.name, message(err))
	}
	return ctx.Err() == nil
}

// herd measures t with each number of waiters, and reports whether to go
// on.
func (r *benchRun) herd(ctx context.Context, t benchTarget) bool {
	for _, w := range r.p.herd {
		res, err := bench.Herd(ctx, t.st, bench.HerdOptions{
			Name: t.name, Waiters: w, Progress: r.prog.report, ProgressEvery: r.prog.every,
		})
		r.prog.clear()
		if err != nil && !res.Partial {
			fmt.Fprintf(r.a.stderr, "leasehold bench: %s: %s\n", t.name, message(err))
			return false
		}
		r.fresh.Herd = append(r.fresh.Herd, res)
		r.emit(bench.Report{Herd: []bench.HerdResult{res}})
		if ctx.Err() != nil {
			return false
		}
	}
	return true
}

// progress prints the progress line on stderr: redrawn in place on a
// terminal, else a line every few seconds.
type progress struct {
	w     io.Writer
	tty   bool
	every time.Duration

	mu    sync.Mutex
	last  time.Time
	phase string
	shown bool
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, every: 2 * time.Second}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty, p.every = true, 500*time.Millisecond
		}
	}
	return p
}

func (p *progress) report(pr bench.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := "leasehold bench: " + pr.String()
	if p.tty {
		fmt.Fprintf(p.w, "\r%s\x1b[K", line)
		p.shown = true
		return
	}
	key := pr.Store + "/" + pr.Phase + "/" + strconv.Itoa(pr.Clients)
	if key != p.phase || time.Since(p.last) >= 10*time.Second {
		fmt.Fprintln(p.w, line)
		p.phase, p.last = key, time.Now()
	}
}

// clear removes the progress line from a terminal.
func (p *progress) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}
