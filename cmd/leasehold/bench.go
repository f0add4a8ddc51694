package main

import (
	"context"
	"os/signal"
	"syscall"
)

// benchUsage is the text of "leasehold bench -h".
const benchUsage = `Usage: leasehold bench --store URL [--store URL ...] [--clients 1,8,64] [--duration 10s]
                       [--keys distinct|hot] [--json] [--chart out.svg] [--markdown]
                       [--scale 1,1000,10000,100000] [--herd 1,8,64] [--mem-pid PID,...]
                       [--probes 200] [--handoffs 10] [--from results.jsonl ...] [--title T]
                       [--prims]

Measures each store as its users will use it: acquire+release cycles through
a leasehold client with each number of --clients on distinct keys (one per
client) or one hot key, for --duration each, while a lease with a short TTL
is held and renewed; then the time from a release to a waiting client's
acquire. It prints one table with the stores side by side: cycles/s, acquire
latency p50/p90/p99, release latency p50/p99, errors, renewals per second of
the held lease, and the release-to-waiter hand-off time (milliseconds).

  --store NAME=URL names the store in the results (default: the store's kind).
  --scale N,...    also measure acquire latency and memory with N leases held
                   (memory: the process tree of --mem-pid, or this process
                   for sqlite:// and memory:// stores)
  --herd W,...     also measure store attempts per release and the hand-off
                   time with W clients waiting on one key (thundering herd)
  --prims          also measure the semaphore and the read-write lock against
                   a plain lease cycle, one cycle of each in turn on one client
                   (10 slots: none held, then 9 held by another client; a
                   reader, a writer), and the semaphore's hand-off with 64
                   clients contending for its 10 slots; printed as two tables
                   and "SUMMARY <id> <value>" lines (scripts/bench-page reads
                   them), not as JSON
  With --scale, --herd or --prims and no --clients, only those are measured.
  --from FILE      add the results of an earlier --json run (or hand-written
                   lines with "kind":"reference") to the table and chart; with
                   --from and no --store, nothing is measured.

Every store is opened and checked before any load is sent: an unreachable
store or a malformed URL is an error and nothing runs. Every lease the bench
takes is released before it exits. Ctrl-C stops it and prints what was
measured so far (exit status 130); a second Ctrl-C kills it.

Flags:
  --store URL      a store to measure (repeatable; default $LEASEHOLD_STORE,
                   else the embedded file)
  --clients LIST   numbers of concurrent clients (default 1,8,64)
  --duration D     how long each client count cycles (default 10s)
  --keys MODE      distinct (one key per client) or hot (one key for all)
  --json           print one JSON object per result instead of the table;
                   errors as one line of JSON on stderr
  --markdown       print the table in Markdown
  --chart FILE     draw latency and throughput as an SVG image in FILE
  --title T        the chart's title
  --scale LIST     held-lease counts to measure at (e.g. 1,1000,10000,100000)
  --probes N       cycles timed at each held-lease count (default 200)
  --herd LIST      numbers of waiting clients (e.g. 1,8,64)
  --mem-pid LIST   server process ids whose memory --scale reports
  --handoffs N     release-to-waiter hand-offs timed per run (default 10)
  --from FILE      earlier results to include (repeatable)
  --prims          the semaphore and the read-write lock against a plain cycle

Exit status: 0 success; 1 a store failed or a measurement counted errors;
2 bad usage; 130 interrupted.
`

// bench is the bench command: it parses the command line into a plan,
// opens and checks every store, then measures them and prints the results.
func (a *app) bench(args []string) int {
	p, code := a.parseBench(args)
	if p == nil {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop) // a second signal kills

	defer p.close()
	if err := p.open(ctx); err != nil {
		return a.fail("bench", err)
	}
	return a.runBench(ctx, p)
}
