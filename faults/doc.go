// Package faults is leasehold's fault-injection harness: it measures what a
// lease promises under failures, on real stores, with real processes. This
// package holds no code; the harness is in these packages, from the run's
// record to its report:
//
//   - history: the events of a run (holder, resource and harness), the
//     recorders that write them and the files they are kept in, on one
//     CLOCK_MONOTONIC time line.
//   - check: the checkers, pure functions from a history to findings and a
//     verdict (W1-W5, the CLI workload, W7, W8, W9), and the catalogue of fault
//     classes (check.Faults, check.CLIFaults). No process or network code.
//   - report: the Markdown report (docs/safety.md) and the one-run
//     summaries, from results or from the suite's results files.
//   - harness: the backends (one per store, BackendNames and NewBackend),
//     the table of fault injectors, the holder processes, and the runs
//     (Run, RunCLI).
//   - proxy (and proxy/pgwire): the TCP fault proxy between each holder and
//     the store, and the PostgreSQL wire readers of the late clean-up fault.
//   - clock: the holders' slow clock and the step of a server's wall clock.
//   - resource: the protected resource the holders write to.
//   - stall: W7, fence.Middleware under stalled writers (stall.Run).
//   - prims: W8 and W9, the semaphore and the read-write lock under
//     holder pauses and kills and store faults (prims.Run).
//
// The command in cmd/faults runs them; scripts/faults is the entry point
// (--short for CI, --long to regenerate docs/safety.md). What each workload
// and fault is, and how a run goes, is in package harness's documentation.
package faults
