// Package rwlock is a fenced read-write lock over any leasehold store:
// readers share it, a writer holds it alone, and a waiting writer stops new
// readers (writer-preferring). It needs nothing of the store but the Store
// contract's exclusive leases per key, so it works on every store.
//
// # Design
//
// A lock on KEY uses N+1 ordinary leases:
//
//   - the gate, KEY/w. A writer takes it first and holds it for as long as
//     it waits and writes; its token is the write epoch. A reader holds it
//     only while it passes through (three round trips).
//   - N reader slots, KEY/r/0 .. KEY/r/N-1 (Options.Readers, default 8).
//     A reader holds one for as long as it reads.
//
// [Lock.RLock]: take the gate (waiting as the caller allows, with the
// store's notifications or queue where it has them), take any free slot,
// check the gate is still held (by the holder's deadline), let the gate go.
// The reader's write epoch is the gate token it passed with. When every
// slot is taken it lets the gate go and tries again after a backoff.
//
// [Lock.Lock]: take the gate, then read the slots' holders until none is
// held (polling, with the client's backoff capped at a third of the TTL),
// and check the gate is still held. A new reader cannot pass the gate the
// writer holds, so readers already in finish or expire and no new one
// comes: that is the writer preference.
//
// Fixed slots, not a key per reader, because many stores keep a row per
// key for ever (the token must keep increasing across releases): unique
// reader keys would grow the store without bound.
//
// # Safety
//
// Claim: a writer's hold never overlaps another hold, so long as each
// store key is linearizable (as the Store contract requires) and the
// holders' clocks keep to the client's Rho.
//
// Writer against writer: both hold the gate, an exclusive lease.
//
// Reader against writer: the reader's steps are G (acquire the gate), A
// (acquire a slot), C (check, after A returned, that its gate's deadline
// has not passed), and the writer's are W (acquire the gate) and R (read
// that slot, after W returned, and find it free), then its own check. The
// gate is exclusive, so the reader's gate lease and the writer's are
// disjoint in the gate's order. If the writer's came first, the writer
// released or lost the gate before G, so its hold ended before the reader
// began. If the reader's came first, it lasted at least until C (the
// holder's deadline is before the store's expiry), so W comes after C and
// after A; R comes after W; so R reads the slot after A took it and finds
// it held, unless the reader's slot lease has since ended (released, or
// expired: and a slot expires at the store only after the reader's own
// deadline has cancelled its hold's context). Linearizability per key
// composes (it is a local property), so these per-key orders and the
// real-time order of each process's steps form one order, and the cases
// are exhaustive.
//
// The checks C and the writer's matter: a holder paused past its gate's
// deadline between its steps would otherwise go on as if it held the gate.
//
// A lease expiring mid-hold: a hold lives by one lease (a reader's slot, a
// writer's gate), and its context ends, with the lease's cause, at the
// holder's deadline if no renewal came; from the store's expiry on,
// another can come in. Work that outlives the context (a paused process,
// a request in flight) is what the sequencer is for.
//
// # Fencing
//
// [Hold.Sequencer] is (mode, write epoch, token). A resource keeps a
// [Guard] and checks every request's sequencer: a writer is refused when
// its epoch is below the highest epoch seen (someone came through the gate
// after it, so its hold ended), a reader when its epoch is below the latest
// writer's (that writer came in after the reader's hold ended). The
// refusal is a *fence.StaleError. Gate tokens are epochs only on stores
// whose Info().SafeTokens is true.
//
// # Caveats
//
//   - A reader costs three round trips more than a plain lease (gate
//     acquire, gate release, and the slot), and readers pass the gate one
//     at a time.
//   - A waiting writer polls the slots (N holder reads per poll); it does
//     not use the store's watch.
//   - A writer waiting for the gate competes with readers passing it; on
//     stores that queue waiters ([leasehold.Waiter]) the gate is FIFO,
//     elsewhere it is as fair as the client's wait.
//   - A reader or writer that crashes holding the gate, or whose release
//     of it fails, blocks everyone until the gate's TTL ends it.
//   - Every process must use the same key, Readers and a similar TTL.
//
// # STATUS
//
// Works: RLock, Lock, Hold, Sequencer, Guard, on every store. Tests:
// `GOWORK=off go test -race -count=1 ./rwlock/` (the memory store: sharing,
// exclusion, writer preference, a reader expiring mid-hold, the wait, the
// Guard's table and FuzzGuard). The conformance rules
// "rwlock_never_a_reader_with_a_writer" and
// "rwlock_waiting_writer_gets_in_within_readers_ttl" run in every store's
// leasetest.Run; their sensitivity tests (a writer that ignores readers,
// readers that ignore a waiting writer) are `GOWORK=off go test -race
// -count=1 -run 'RW' ./leasetest/`. Passed this session on memory,
// sqlite, etcd, ZooKeeper, postgres (lease rows and advisory locks),
// Redis, Redlock, Consul, S3 (versitygw), DynamoDB (dynalite), Azure Blob
// (Azurite), Kubernetes and the leasehold server (remote), e.g. `cd sqlite
// && GOWORK=off go test -race -count=1 -run 'TestConformance$/rwlock' ./`.
// The CLI: `leasehold run --read KEY` and `--write KEY -- cmd` (`cd cmd &&
// GOWORK=off go test -count=1 -run TestRunReadWriteLock ./leasehold/`).
//
// The fault-harness workload W9 (faults/prims: three readers and two
// writers as processes, every read and write checked by a Guard, under
// holder pauses and kills and store faults; never a reader with a writer,
// 0 stale writes admitted, writers get in; its mutation, writers that
// ignore readers, is caught) runs in ./scripts/faults --short on sqlite
// and redis; by hand `faults prims -store redis -workload W9`; docs/safety.md
// has its long rows on all sixteen store rows (faults suite -prims-only).
//
// Performance (issue 29, no goal): `leasehold bench --prims --store URL`
// times a read cycle (RLock+Release) and a write cycle (Lock+Release),
// no one else on the lock, against a plain lease cycle, one cycle of each
// in turn (scripts/bench-page shows them). A read cycle is 4 store calls
// (gate acquire, slot acquire, gate release, slot release: 2x a plain
// cycle's), a write cycle 10 with the default 8 reader slots (gate acquire,
// 8 Holder reads, release): on a loaded 2-core machine, 1.7-3.2x and
// 2.1-6.9x a plain cycle on memory, embedded, Redis, PostgreSQL, etcd.
//
// Not done: a writer woken by the store's watch of the slots instead of
// polling; reading all slots in one List call where the store has a Lister
// (on Redis a List is a SCAN of the whole keyspace, dearer than 8 Holder
// reads).
package rwlock
