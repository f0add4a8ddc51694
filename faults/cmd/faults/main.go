// Command faults is leasehold's fault-injection harness (packages faults/harness,
// faults/check and faults/report).
//
//	faults run   -store sqlite [-seconds 30] [-seed 1] [-ttl 1s] [-mutation] [-faults F1,F2] [-dir D] [-keep]
//	faults suite -short|-long [-stores sqlite,redis,...] [-runs N] [-seconds S] [-out docs/safety.md]
//	faults report [-out docs/safety.md] [-mode long] [-command "..."] results.jsonl [more.jsonl ...]
//	faults stall -store sqlite [-seconds 10] [-seed 1] [-writers 4] [-dir D]   (W7 with default options, then UnsafeConcurrent)
//	faults stores [-all | -stores a,b,...] [-servers]   (the suite's stores, or the servers they start, one a line)
//	faults cli   -store sqlite [-seconds 0] [-seed 1] [-ttl 1s] [-leasehold PATH] [-dir D] [-keep]
//	faults prims -store sqlite -workload W8|W9 [-seconds 0] [-seed 1] [-ttl 750ms] [-mutation] [-dir D] [-keep]   (the semaphore, the read-write lock)
//	faults prim-holder ... (internal: a holder process of W8 or W9)
//	faults holder ...   (internal: a holder process, started by the harness)
//	faults cli-child ... (internal: the command of a leasehold run holder)
//
// suite exits with status 1 when a store misses a target its documentation
// claims, or when a run was invalid (its faults did not bite).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/leasehold-go/leasehold/faults/clock"
	"github.com/leasehold-go/leasehold/faults/harness"
	"github.com/leasehold-go/leasehold/faults/netlab"
	"github.com/leasehold-go/leasehold/faults/prims"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "run", "suite", "cli", "stall", "prims":
		// The run's servers, holders and proxies live in a private network
		// namespace, where the member partitions (F13-F16) build their lab.
		if err := netlab.Enter(); err != nil && !errors.Is(err, netlab.ErrOff) {
			fmt.Fprintln(os.Stderr, "faults:", err)
			os.Exit(1)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if os.Getenv(harness.EnvNoInterrupt) == "1" && os.Args[1] != "holder" {
		// A long run on a shared machine: log stray SIGINT, SIGTERM and
		// SIGHUP instead of stopping (only SIGKILL stops it then).
		stop()
		ctx = context.Background()
		ch := make(chan os.Signal, 8)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
		go func() {
			for sig := range ch {
				logf("ignored signal %v (%s is set)", sig, harness.EnvNoInterrupt)
			}
		}()
	}
	var err error
	code := 0
	switch os.Args[1] {
	case "holder":
		stop() // the holder handles its own signals
		var cfg harness.HolderConfig
		cfg, err = harness.ParseHolderArgs(os.Args[2:])
		if err == nil {
			err = harness.RunHolder(context.Background(), cfg, open)
		}
	case "prim-holder":
		stop()
		var cfg prims.HolderConfig
		cfg, err = prims.ParseHolderArgs(os.Args[2:])
		if err == nil {
			err = prims.RunHolder(context.Background(), cfg, open)
		}
	case "cli-child":
		stop()
		var cfg harness.CLIChildConfig
		cfg, err = harness.ParseCLIChildArgs(os.Args[2:])
		if err == nil {
			err = harness.RunCLIChild(cfg)
		}
	case "run":
		code, err = runCmd(ctx, os.Args[2:])
	case "cli":
		code, err = cliCmd(ctx, os.Args[2:])
	case "suite":
		code, err = suiteCmd(ctx, os.Args[2:])
	case "report":
		code, err = reportCmd(os.Args[2:])
	case "prims":
		code, err = primsCmd(ctx, os.Args[2:])
	case "stall":
		code, err = stallCmd(ctx, os.Args[2:])
	case "stores":
		code, err = storesCmd(os.Stdout, os.Args[2:])
	default:
		usage()
	}
	clock.CleanupProbe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

func usage() {
	fmt.Fprint(os.Stderr, `usage:
  faults run   -store NAME [-seconds 30] [-seed N] [-ttl 1s] [-mutation] [-faults F1,F2,...] [-dir D] [-keep]
  faults cli   -store NAME [-seconds 0] [-seed N] [-ttl 1s] [-leasehold PATH] [-dir D] [-keep]
  faults suite -short|-long [-stores a,b,...] [-runs N] [-seconds S] [-seed N] [-out docs/safety.md] [-json results.jsonl]
  faults report [-out docs/safety.md] [-mode long] [-command "..."] results.jsonl [more.jsonl ...]
  faults stall -store sqlite [-seconds 10] [-seed N] [-writers 4] [-dir D]
  faults prims -store NAME -workload W8|W9 [-seconds 0] [-seed N] [-ttl 750ms] [-mutation] [-dir D] [-keep]
  faults stores [-all | -stores a,b,...] [-servers]   (the suite's stores, or the servers they start, one a line)
stores: `+storeNames()+"\n")
	os.Exit(2)
}
