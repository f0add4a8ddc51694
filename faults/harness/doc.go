// Package harness runs leasehold's fault-injection harness: it measures what a
// lease promises under failures, on real stores, with real processes.
//
// A run starts a store (its real server processes, or a file for the
// embedded store), a protected resource (an HTTP server in the harness
// process) and a few holder processes (the harness binary re-executed in
// holder mode). The holders contend for a few keys with a leasehold.Client
// and, while they hold a key, perform protected operations on the resource:
//
//   - W1, an unfenced read-modify-write counter: the negative control. Under
//     pauses longer than the TTL it must show overlaps and lost updates, or
//     the harness cannot see what it claims to catch.
//   - W2, a fenced register: every write carries the lease's token
//     (fence.Header) and the resource admits it only if the token is at
//     least the highest it has admitted (fence.Middleware over a guard).
//
// A separate workload, W7 (package stall), tests fence.Middleware itself: writers
// lease keys from the store and send fenced writes over HTTP to a service
// whose handler stalls at random after the admission, longer than the
// writer waits, so that the next writer arrives with a higher token while
// the stalled write is pending. With the default options no write may land
// below a write already landed; with UnsafeConcurrent (the negative
// control) some must, or the run is invalid.
//
// Meanwhile the harness injects faults: holder pauses (SIGSTOP) shorter than
// the renew margin and of 1-3 x TTL, holder kills and respawns, a TCP proxy
// between each holder and the store that adds latency beyond the TTL, drops
// replies after the request went through, resets connections and partitions,
// drops a granted acquire's reply and holds back the clean-up the store then
// sends until a retry of the holder has won the key again (PostgreSQL's
// lease rows: the late clean-up must not clear the later grant),
// store pauses, store kills and restarts (Redis also without persistence),
// the kill of the leader of an etcd cluster, a ZooKeeper ensemble or a
// Consul cluster (never the Consul agent the holders talk to), Redlock's
// split majority (a master
// restarted empty while a holder's grant lives on a bare majority), a step
// of the Redis server's wall clock (libfaketime, or where that fails the
// harness's own LD_PRELOAD library), a holder clock that runs slow (an
// injected leasehold.Clock, package clock: 0.5% slow, within the client's
// Rho, and 40% slow, beyond it), and a step of one holder's wall clock
// alone (a holder built with a patched time package, package clock). Every acquire, renew, release, loss signal
// and protected operation is recorded with CLOCK_MONOTONIC timestamps, which
// are system-wide on Linux, so holder, resource and harness events share one
// time line.
//
// The checkers (package check) then report stale-token writes the resource accepted
// (an exact scan of the resource's admission order, and a linearizability
// check of the holders' view with porcupine), tokens that went backwards or
// repeated, concurrent holders (a lease accepted while another holder's
// lease on the key was still within its own deadline), a history of grants
// that no register of one live grant per key explains (porcupine; only
// under the faults a backend declares it may lose a grant under,
// GrantLoser, may a grant end early), protected operations
// issued after the holder's own loss signal or deadline, takeover time after
// a kill as a ratio of the TTL, keys still stuck after the faults healed,
// and the unfenced counter's overlaps and lost updates.
// A run whose pauses never produced a stale write attempt, or whose late
// clean-ups never followed a retry that won the key, is invalid, not a pass;
// concurrent holders under the late clean-up are a missed target. A mutation run disables the fence check and must be reported as a
// violation every time.
//
// A second workload (RunCLI) checks the rule of the leasehold command's run:
// its holders are leasehold run processes, the protected writes come from
// the command they run, and the faults (SIGSTOP and SIGKILL of the
// leasehold process, renewals that stall) must never let a command write
// after the next holder's grant.
//
// The command in cmd/faults runs it; scripts/faults is the entry point
// (--short for CI, --long to regenerate docs/safety.md).
//
// The package holds the backends (Backend and its capability interfaces,
// BackendNames and NewBackend: one per store, each starting its servers
// with internal/testserver), the table of faults (which class applies to
// which store through those interfaces, and how each is injected), the
// holder processes with their recording store wrapper, the CLI workload,
// and Run and RunCLI, which return results for package report to render.
// The self-contained pieces they use live in packages of their own:
//
//   - faults/proxy: the TCP fault proxy between each holder and each store
//     endpoint (latency, dropped replies, resets, partitions, the late
//     clean-up's lost reply and delayed requests);
//   - faults/proxy/pgwire: the PostgreSQL wire readers the postgres
//     backend gives the proxy for the late clean-up (F5c);
//   - faults/clock: the holders' slow clock (F12, F12b), the step of the
//     Redis server's wall clock (F11: libfaketime or the clockshift
//     LD_PRELOAD library) and the build of the holder whose wall clock
//     F17 steps (go build -overlay with a patched time package);
//   - faults/resource: the protected resource the holders write to, and
//     their client for it;
//   - faults/stall: W7, fence.Middleware under stalled writers, over one of
//     this package's backends;
//   - faults/prims: W8 and W9, the semaphore and the read-write lock, with
//     holder processes of their own, over one of this package's backends;
//   - faults/netlab: the run's private network namespace and the labs of
//     member namespaces whose links the member partitions (F13-F16) cut.
//
// Files here: run.go and harness.go (Run and its phases), faults.go (the
// fault table) with its injectors (episodes.go, netfaults.go,
// storefaults.go, latecleanup.go, wallclock.go, partitions.go), backend.go and
// backend_<store>.go (the backends; redisclock.go installs the clock step
// in the Redis one),
// registry.go (the backends' names), holder.go and recstore.go (the
// holder process), cli*.go (the CLI workload) and procs.go (process
// helpers over internal/testserver).
package harness
