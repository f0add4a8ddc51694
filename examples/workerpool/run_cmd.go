package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/leasehold-go/leasehold/internal/testserver"
)

// runFlags parses the run subcommand's arguments.
func runFlags(args []string, stderr io.Writer) (runConfig, error) {
	cfg := runConfig{Layers: allLayers()}
	fs := flag.NewFlagSet("workerpool run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.DSN, "dsn", "", "PostgreSQL URL; empty starts a throwaway server (internal/testserver: initdb and postgres must be installed)")
	fs.IntVar(&cfg.Messages, "messages", 200, "distinct messages (one in ten is enqueued twice)")
	fs.IntVar(&cfg.Workers, "workers", 3, "worker processes")
	fs.IntVar(&cfg.Kills, "kills", 2, "workers SIGKILLed mid-message (alternately before the write and before the ack)")
	fs.IntVar(&cfg.Pauses, "pauses", 1, "workers SIGSTOPped past their lease's end just before the write")
	fs.DurationVar(&cfg.VT, "vt", 2*time.Second, "visibility timeout")
	fs.DurationVar(&cfg.TTL, "ttl", time.Second, "lease TTL")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the payloads")
	fs.DurationVar(&cfg.Timeout, "timeout", 5*time.Minute, "bound of the whole run")
	fs.BoolVar(&cfg.Keep, "keep", false, "keep the run's schema (with -dsn) for inspection")
	on := fs.String("layers", "all", "layers the workers apply: all, or a list of fence,dedupe,lease (negative controls)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	var err error
	if cfg.Layers, err = parseLayers(*on); err != nil {
		return cfg, err
	}
	if cfg.Messages < 1 || cfg.Workers < 1 || cfg.Kills < 0 || cfg.Pauses < 0 {
		return cfg, fmt.Errorf("run: -messages and -workers must be positive, -kills and -pauses not negative")
	}
	if cfg.Pauses > 0 && cfg.Pauses >= cfg.Workers {
		return cfg, fmt.Errorf("run: -pauses must leave a worker unpaused: at most %d with %d workers", cfg.Workers-1, cfg.Workers)
	}
	if cfg.TTL >= cfg.VT {
		return cfg, fmt.Errorf("run: -ttl must be shorter than -vt, so that a stopped holder's lease ends within a redelivery's window")
	}
	return cfg, nil
}

// runCommand is the run subcommand: it starts a server unless -dsn names
// one, runs the pool with this binary as the workers, prints the summary
// line and exits 1 unless the run was exactly once.
func runCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := runFlags(args, stderr)
	if err != nil {
		return usageError(stderr, err)
	}
	if cfg.Binary, err = os.Executable(); err != nil {
		fmt.Fprintln(stderr, "workerpool:", err)
		return 1
	}
	if cfg.LogDir, err = os.MkdirTemp("", "workerpool-logs-"); err != nil {
		fmt.Fprintln(stderr, "workerpool:", err)
		return 1
	}
	cfg.Progress = stderr
	if cfg.DSN == "" {
		pg, err := testserver.StartPostgres(ctx, testserver.PostgresOptions{})
		if err != nil {
			fmt.Fprintln(stderr, "workerpool: starting PostgreSQL (or give -dsn):", err)
			return 1
		}
		defer pg.Stop()
		cfg.DSN = pg.ConnString()
		cfg.Keep = false // the server goes away with its data
	}
	fmt.Fprintf(stderr, "workerpool: worker logs in %s\n", cfg.LogDir)
	s, err := runPool(ctx, cfg)
	fmt.Fprintln(stdout, s)
	if err != nil {
		fmt.Fprintln(stderr, "workerpool:", err)
		return 1
	}
	if err := s.check(); err != nil {
		fmt.Fprintln(stderr, "workerpool:", err)
		return 1
	}
	return 0
}
