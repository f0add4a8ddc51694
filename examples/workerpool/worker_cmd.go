package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/postgres"
)

// workerFlags parses the worker subcommand's arguments.
func workerFlags(args []string, stderr io.Writer) (workerConfig, error) {
	var cfg workerConfig
	fs := flag.NewFlagSet("workerpool worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.DSN, "dsn", "", "PostgreSQL URL (required)")
	fs.StringVar(&cfg.Schema, "schema", "", "the run's schema (required; made by the driver)")
	fs.StringVar(&cfg.Name, "name", "worker", "the worker's name")
	fs.DurationVar(&cfg.VT, "vt", 2*time.Second, "visibility timeout of a claim")
	fs.DurationVar(&cfg.TTL, "ttl", time.Second, "lease TTL on a msg_id")
	fs.DurationVar(&cfg.Poll, "poll", 20*time.Millisecond, "pause when no row is visible")
	fs.BoolVar(&cfg.Control, "control", false, "read fault points from standard input, stop when it ends")
	on := fs.String("layers", "all", "layers to apply: all, or a list of fence,dedupe,lease (negative controls)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	var err error
	if cfg.Layers, err = parseLayers(*on); err != nil {
		return cfg, err
	}
	if cfg.DSN == "" || cfg.Schema == "" {
		return cfg, fmt.Errorf("worker: -dsn and -schema are required")
	}
	if cfg.VT <= 0 || cfg.TTL <= 0 || cfg.Poll <= 0 {
		return cfg, fmt.Errorf("worker: -vt, -ttl and -poll must be positive")
	}
	return cfg, nil
}

// runWorker connects, runs the claim loop until ctx ends (or, with
// Control, until stdin ends), and closes everything.
// maxConns is the size of a worker's connection pool.
const maxConns = 8

func runWorker(ctx context.Context, cfg workerConfig, stdin io.Reader, stdout, stderr io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t, err := newTables(cfg.Schema)
	if err != nil {
		return err
	}
	pcfg, err := pgxpool.ParseConfig(cfg.DSN)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	pcfg.MaxConns = maxConns // the claim, the lease, the effect's transaction, the notifier's LISTEN
	// A worker stopped (SIGSTOP) or starved inside a transaction holds its
	// row locks, and every other worker's write of those rows waits: the
	// server ends a transaction left idle for longer than the visibility
	// timeout, and a statement running longer than the effect's timeout.
	pcfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"] = strconv.FormatInt(cfg.VT.Milliseconds(), 10)
	pcfg.ConnConfig.RuntimeParams["statement_timeout"] = strconv.FormatInt(writeTimeout.Milliseconds(), 10)
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	defer pool.Close()
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	store, err := postgres.New(pool, t.storeOptions())
	if err != nil {
		return err
	}
	defer store.Close()
	client, err := leasehold.New(store, &leasehold.Options{TTL: cfg.TTL, Label: cfg.Name})
	if err != nil {
		return err
	}
	defer client.Close()
	w := &worker{cfg: cfg, t: t, db: db, client: client,
		hooks: newHooks(stdout, ctx.Done()), log: log.New(stderr, cfg.Name+" ", log.Lmicroseconds)}
	if cfg.Control {
		go w.hooks.readControl(stdin, cancel)
	}
	w.log.Printf("started: vt %s, lease TTL %s, layers %s", cfg.VT, cfg.TTL, cfg.Layers)
	w.loop(ctx)
	w.log.Print("stopping")
	return nil
}
