// Command workerpool is leasehold's worker pool example: a PostgreSQL queue
// (FOR UPDATE SKIP LOCKED, with a visibility timeout) drained by worker
// processes that apply the three layers, so that every message's effect is
// applied exactly once although the stream holds duplicates, rows are
// redelivered, and workers are killed and paused mid-message.
//
//	workerpool run [flags]      enqueue, start the workers, inject the faults, print the summary
//	workerpool worker [flags]   one worker (the run starts them)
//
// See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runMain(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// runMain runs a subcommand and returns the exit code: 0, 1 when the run is
// not exactly once or fails, 2 for bad arguments.
func runMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: workerpool run [flags] | workerpool worker [flags] (-h for the flags)")
		return 2
	}
	switch args[0] {
	case "worker":
		cfg, err := workerFlags(args[1:], stderr)
		if err != nil {
			return usageError(stderr, err)
		}
		if err := runWorker(ctx, cfg, stdin, stdout, stderr); err != nil {
			fmt.Fprintln(stderr, "workerpool worker:", err)
			return 1
		}
		return 0
	case "run":
		return runCommand(ctx, args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "workerpool: unknown subcommand %q (want run or worker)\n", args[0])
	return 2
}

// usageError reports a flag error (the flag package has printed the
// usage for -h).
func usageError(stderr io.Writer, err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, err)
	return 2
}
