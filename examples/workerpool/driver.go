package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// runConfig configures one run of the pool.
type runConfig struct {
	DSN      string        // the PostgreSQL server's URL
	Binary   string        // this program's binary, started as "BINARY worker ..."
	Messages int           // distinct messages (duplicates come on top)
	Workers  int           // worker processes kept running
	Kills    int           // workers SIGKILLed mid-message (alternately before the write and before the ack)
	Pauses   int           // workers SIGSTOPped past their lease's end just before the write
	VT       time.Duration // the visibility timeout
	TTL      time.Duration // the lease TTL
	Layers   layers        // the layers the workers apply
	Seed     uint64        // the payloads' seed
	Timeout  time.Duration // the whole run's bound
	LogDir   string        // the workers' logs
	Keep     bool          // keep the run's schema afterwards
	Progress io.Writer     // the driver's progress lines; nil means none
}

// runPool runs the pool once: a fresh schema, the plan enqueued, the
// workers started and faulted, until every row is acked and every fault has
// played out. It returns the summary, and an error if the run itself went
// wrong (a fault that never fired, a worker that crashed, the timeout); the
// exactly-once verdict is summary.check's.
func runPool(ctx context.Context, cfg runConfig) (summary, error) {
	start := time.Now()
	db, err := sql.Open("pgx", cfg.DSN)
	if err != nil {
		return summary{}, err
	}
	defer db.Close()
	t, err := newTables(fmt.Sprintf("wp_%d_%d", os.Getpid(), time.Now().UnixNano()))
	if err != nil {
		return summary{}, err
	}
	if err := t.migrate(ctx, db); err != nil {
		return summary{}, err
	}
	if !cfg.Keep {
		defer func() { _ = t.drop(context.WithoutCancel(ctx), db) }()
	}
	p := makePlan(cfg.Messages, cfg.VT, cfg.Seed)
	if err := t.enqueue(ctx, db, p.msgs); err != nil {
		return summary{}, err
	}
	events, err := os.Create(filepath.Join(cfg.LogDir, "events.log"))
	if err != nil {
		return summary{}, err
	}
	defer events.Close()
	d := newDriver(cfg, db, t, len(p.msgs), events)
	d.logf("schema %s: %d messages in %d rows (%d enqueued twice, %d slower than vt %s), %d workers, %d kills, %d pauses, layers %s",
		t.schema, p.ids, len(p.msgs), p.dupIDs, p.slow, cfg.VT, cfg.Workers, cfg.Kills, cfg.Pauses, cfg.Layers)
	runErr := d.run(ctx)
	s, err := t.summarize(context.WithoutCancel(ctx), db)
	if err != nil {
		return s, errors.Join(runErr, err)
	}
	s.Layers, s.Kills, s.Pauses, s.Workers = cfg.Layers, d.kills, d.pauses, len(d.procs)
	s.Outcomes, s.StaleLanded, s.Stalled = d.outcomes, d.staleLanded, d.stalled
	s.Elapsed = time.Since(start)
	return s, runErr
}

// driver runs the workers and the faults of one run.
type driver struct {
	cfg    runConfig
	db     *sql.DB
	t      tables
	rows   int
	lines  chan line
	stop   chan struct{}
	procs  []*proc
	faults []*fault
	busy   map[*proc]time.Duration // the work time of the message a worker is on
	events io.Writer               // every worker's event lines and the driver's own, timed

	outcomes    map[string]int // event kind -> count, from the workers' lines
	kills       int
	pauses      int
	staleLanded int      // stalled writes that landed (must stay 0 with the fence)
	stalled     []string // each stalled write's outcome
}

func newDriver(cfg runConfig, db *sql.DB, t tables, rows int, events io.Writer) *driver {
	return &driver{cfg: cfg, db: db, t: t, rows: rows, lines: make(chan line, 256), stop: make(chan struct{}),
		faults: planFaults(cfg.Kills, cfg.Pauses, rows), busy: map[*proc]time.Duration{}, events: events,
		outcomes: map[string]int{}}
}

// logf prints a progress line, and copies it to the events file.
func (d *driver) logf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(d.events, "%s driver %s\n", time.Now().Format("15:04:05.000"), msg)
	if d.cfg.Progress != nil {
		fmt.Fprintf(d.cfg.Progress, "workerpool: %s\n", msg)
	}
}

// run starts the workers and drives them until the queue is drained and
// every fault is done, then stops them.
func (d *driver) run(ctx context.Context) (err error) {
	defer func() { err = errors.Join(err, d.stopAll()) }()
	for range d.cfg.Workers {
		if err := d.startWorker(); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("run interrupted: %w", ctx.Err())
			}
			return fmt.Errorf("run did not finish within %s: %s", d.cfg.Timeout, d.state(context.WithoutCancel(ctx)))
		case l := <-d.lines:
			if err := d.onLine(l); err != nil {
				return err
			}
		case <-tick.C:
			finished, err := d.onTick(ctx)
			if err != nil || finished {
				return err
			}
		}
	}
}

// startWorker starts one more worker.
func (d *driver) startWorker() error {
	name := "w" + strconv.Itoa(len(d.procs)+1)
	c := d.cfg
	p, err := spawn(c.Binary, []string{"-dsn", c.DSN, "-schema", d.t.schema, "-vt", c.VT.String(),
		"-ttl", c.TTL.String(), "-layers", c.Layers.String()}, name, c.LogDir, d.lines, d.stop)
	if err != nil {
		return err
	}
	d.procs = append(d.procs, p)
	return nil
}

// onLine follows a worker's events: what it is working on, its outcomes,
// and the fault points it reached.
func (d *driver) onLine(l line) error {
	fmt.Fprintf(d.events, "%s %s %s\n", time.Now().Format("15:04:05.000"), l.p.name, strings.Join(l.f, " "))
	if len(l.f) < 4 {
		return nil
	}
	kind, msg := l.f[0], l.f[1]
	switch kind {
	case "work":
		w, _ := time.ParseDuration(l.f[len(l.f)-1])
		d.busy[l.p] = w
		return nil
	case "held", "stall":
		return d.fired(l)
	}
	delete(d.busy, l.p)
	d.outcomes[kind]++
	d.stalledOutcome(l.p, kind, msg)
	return nil
}

// onTick arms the next fault, resumes paused workers whose message was
// taken over, checks for workers that died unasked, and reports whether
// the run is finished.
func (d *driver) onTick(ctx context.Context) (bool, error) {
	for _, p := range d.procs {
		if !p.alive() && !p.killed {
			return false, fmt.Errorf("worker %s exited by itself: %v\n%s", p.name, p.exitErr, p.logTail())
		}
	}
	var acked int
	if err := d.db.QueryRowContext(ctx, `SELECT count(*) FROM `+d.t.queue()+` WHERE acked`).Scan(&acked); err != nil {
		return false, fmt.Errorf("progress: %w", err)
	}
	if err := d.advanceFaults(ctx, acked); err != nil {
		return false, err
	}
	if acked < d.rows {
		return false, nil
	}
	for _, f := range d.faults {
		if !f.done {
			if f.target == nil || !f.fired {
				return false, fmt.Errorf("the queue drained before fault %s fired", f)
			}
			return false, nil
		}
	}
	return true, nil
}

// stopAll stops every worker still running and reports those that crashed.
func (d *driver) stopAll() error {
	close(d.stop)
	var errs []error
	for _, p := range d.procs {
		if err := p.stop(15 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// state describes a run that is stuck.
func (d *driver) state(ctx context.Context) string {
	var unacked int
	_ = d.db.QueryRowContext(ctx, `SELECT count(*) FROM `+d.t.queue()+` WHERE NOT acked`).Scan(&unacked)
	s := fmt.Sprintf("%d of %d rows not acked", unacked, d.rows)
	for _, f := range d.faults {
		s += "; fault " + f.String()
	}
	return s
}
