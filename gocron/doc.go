// Package gocron runs the jobs of go-co-op/gocron v2 schedulers once across
// many processes, over any leasehold store. Import it under a name of its
// own (lhgocron) beside gocron itself.
//
// A [Locker] is a gocron.Locker (gocron.WithDistributedLocker): every
// scheduler runs the job's schedule, and the one whose lock is granted
// runs each run. The lock is a leasehold lease on the job's name, or, with
// [LockerOptions.Period], on the tick the run belongs to
// ([leasehold.TickKey]), held for at least [LockerOptions.MinHold] after
// the grant ([leasehold.AcquireOptions.MinHold]) so that a quick job is
// not run again by a scheduler whose clock is a little late. gocron cannot
// cancel a job whose lock was lost; [Locker.Guard] wraps a job so that its
// context ends, with the *leasehold.LostError as cause, the moment its
// lease is lost, and returns that error joined to the job's.
//
// An [Elector] is a gocron.Elector (gocron.WithDistributedElector): one
// process leads, by the election package, and only the leader's
// scheduler runs jobs; [Elector.Guard] cancels a job when the leadership
// is lost. The leadership's epoch is a fencing token.
//
// This is a module of its own, so that gocron's dependencies reach only
// the programs that use it.
//
// # Status
//
// Works, with tests against gocron itself on the sqlite store (cd gocron &&
// GOWORK=off go test -race -count=1 ./...): two schedulers with clients of
// their own on one sqlite file run a job every second once per tick; two
// processes (the test binary run again as the second scheduler): the
// holder killed in the middle of the job, the other scheduler runs the job
// on a later tick once the lease expired, and never while the holder
// lived; a job whose lease is lost has its context cancelled with the
// *leasehold.LostError; two Electors, at most one leader, the other taking
// over when the leader closes.
//
// The root package's part of this (issue 29 item 3): AcquireOptions.MinHold
// and leasehold.TickKey, tested in the root module (GOWORK=off go test
// -race -count=1 -run 'MinHold|TickKey' .), with the conformance rule
// minhold_respected_after_an_early_release that every store runs through
// leasetest.Run and its sensitivity tests (cd leasetest && go test -run
// TestMinHoldRule .).
//
// Not done: the pairing of a lock to its run is by the job's context, so
// overlapping runs of one job (no gocron.WithSingletonMode) may see each
// other's lease in Guard; a job that is not started through gocron's
// context parameter cannot be guarded (Guard returns ErrNoLease). The CLI
// has no --min-hold flag yet (leasehold run); the Elector's test runs its
// two schedulers in one process (the Locker's runs two processes). Next:
// a --min-hold and --tick flag for leasehold run, and a fault-harness
// workload for scheduled jobs (one run per tick under kills and pauses).
package gocron
