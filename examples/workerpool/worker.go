package main

import (
	"context"
	"database/sql"
	"errors"
	"log"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/dedupe"
	"github.com/leasehold-go/leasehold/fence"
)

// workerConfig configures one worker process. The driver passes the same
// visibility timeout and lease TTL to all of them.
type workerConfig struct {
	DSN     string        // the PostgreSQL URL
	Schema  string        // the run's schema
	Name    string        // the worker's name, in logs, events and lease labels
	VT      time.Duration // the visibility timeout of a claim
	TTL     time.Duration // the lease TTL on a msg_id
	Layers  layers        // which layers apply (all, except in negative controls)
	Poll    time.Duration // the pause when the queue has nothing visible
	Control bool          // read fault points from standard input (the driver's protocol)
}

// writeTimeout bounds the effect's transaction.
const writeTimeout = 5 * time.Second

// worker is the claim -> process -> ack loop.
type worker struct {
	cfg    workerConfig
	t      tables
	db     *sql.DB
	client *leasehold.Client
	hooks  *hooks
	log    *log.Logger
}

// loop claims and handles rows until ctx ends.
func (w *worker) loop(ctx context.Context) {
	for ctx.Err() == nil {
		d, ok, err := w.t.claim(ctx, w.db, w.cfg.VT)
		if err != nil && ctx.Err() == nil {
			w.log.Print(err)
		}
		if !ok {
			sleep(ctx, w.cfg.Poll)
			continue
		}
		w.handle(ctx, d)
	}
}

// outcome is what became of one delivery.
type outcome struct {
	kind string // processed, dedupe, lease, fence or error: the first line of an event
	ack  bool   // the effect is made: ack the row; otherwise hand it back
	err  error
}

// handle runs one delivery through the layers, then acks the row when the
// message's effect is made (by this delivery or an earlier one) and hands it
// back otherwise. It never acks a message on the presumption that another
// worker has it covered.
func (w *worker) handle(ctx context.Context, d delivery) {
	token, committed, res, err := w.process(ctx, d)
	out := classify(committed, res, err)
	w.hooks.hold(pointHoldAck, d, token)
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	var qerr error
	if out.ack {
		qerr = w.t.ack(bg, w.db, d.Row)
	} else {
		qerr = w.t.handBack(bg, w.db, d, w.cfg.VT/20)
	}
	if qerr != nil {
		w.log.Print(qerr) // the row is redelivered after its window
	}
	if out.kind == "error" {
		w.log.Printf("%s (row %d): %v", d.MsgID, d.Row, err)
	}
	w.hooks.emit(out.kind, d, token)
}

// classify maps a delivery's result to its outcome. A committed effect is
// acked even if the lease was lost meanwhile: the mark committed with it.
func classify(committed bool, res dedupe.Result, err error) outcome {
	switch {
	case committed:
		return outcome{kind: "processed", ack: true, err: err}
	case res == dedupe.Duplicate || errors.Is(err, dedupe.ErrDuplicate):
		return outcome{kind: "dedupe", ack: true}
	case errors.Is(err, fence.ErrStale):
		return outcome{kind: "fence", err: err}
	case errors.Is(err, leasehold.ErrHeld):
		return outcome{kind: "lease", err: err}
	default:
		return outcome{kind: "error", err: err}
	}
}

// process applies the layers that are on. With all of them it is
// dedupe.Consumer.Handle (a record check, the lease on "msg/"+msg_id, a
// second check, the work) with a lease wait that ends before the row's
// visibility window does: a worker that cannot get the lease in time gives
// up (leasehold.ErrHeld) and hands the row back.
func (w *worker) process(ctx context.Context, d delivery) (token uint64, committed bool, res dedupe.Result, err error) {
	on := w.cfg.Layers
	wait := max(d.Window-max(w.cfg.VT/10, 50*time.Millisecond), 0)
	opts := leasehold.AcquireOptions{TTL: w.cfg.TTL, Wait: wait}
	work := func(ctx context.Context, l *leasehold.Lease) error {
		if l != nil {
			token = l.Token()
		}
		err := w.work(ctx, d, l, token)
		committed = err == nil
		return err
	}
	record := w.t.processed().Record(w.db)
	switch {
	case on.Dedupe && on.Lease:
		c := &dedupe.Consumer{Client: w.client, Record: record, Prefix: "msg/", Lease: opts}
		res, err = c.Handle(ctx, d.MsgID, work)
	case on.Lease:
		err = w.client.Do(ctx, "msg/"+d.MsgID, opts, work)
	case on.Dedupe:
		var seen bool
		if seen, err = record.Seen(ctx, d.MsgID); err == nil && seen {
			res = dedupe.Duplicate
		} else if err == nil {
			err = work(ctx, nil)
		}
	default:
		err = work(ctx, nil)
	}
	return token, committed, res, err
}

// work is the message's processing: the simulated work (d.Work long), a
// Checkpoint of the lease, then the effect. The effect's transaction runs
// on a context that the lease's loss does not cancel, like a write already
// on its way when its holder stalls: whether it lands is the fence's
// decision, not the client's.
func (w *worker) work(ctx context.Context, d delivery, l *leasehold.Lease, token uint64) error {
	w.hooks.emit("work", d, token, d.Work.String())
	w.hooks.hold(pointHoldWork, d, token)
	if !sleep(ctx, d.Work) {
		return context.Cause(ctx)
	}
	if l != nil {
		if err := l.Checkpoint(w.cfg.TTL / 5); err != nil {
			return err
		}
	}
	w.hooks.stall(d, token)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	err := applyEffect(wctx, w.db, w.t, w.cfg.Layers, d, token, w.cfg.Name)
	// A worker stopped while one of its pool's connections was inside a
	// transaction (the lease store's, the claim's) finds that connection
	// ended by the server's idle-in-transaction timeout when it resumes:
	// nothing of the effect committed, so it goes out again on another
	// connection (at most once per pooled connection), where the fence
	// judges it.
	for range maxConns {
		if !connEnded(err) {
			break
		}
		err = applyEffect(wctx, w.db, w.t, w.cfg.Layers, d, token, w.cfg.Name)
	}
	return err
}

// connEnded reports whether err is the server ending the connection
// (idle-in-transaction timeout, administrator shutdown) before anything
// of the transaction committed.
func connEnded(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "25P03" || pe.Code == "57P01")
}

// sleep waits for d or the end of ctx, and reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
