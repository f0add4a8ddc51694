// Package etcd is a leasehold store on an etcd v3 cluster, through the
// official client (go.etcd.io/etcd/client/v3), for locks that must stay
// correct under partitions and leader failover.
//
// # Sessions
//
// A Store keeps one etcd lease per TTL class (TTLs are rounded up to whole
// seconds, etcd's lease granularity: a 1.5 s TTL is granted as 2 s, never
// less; MinTTL is 1 s). Every grant of that class is a key put under that
// one lease, kept alive by one LeaseKeepAlive stream, so holding 10,000
// leases costs one keepalive per period, not 10,000. The session is created
// on the first acquire of its class (one extra round trip, once) and revoked
// after Options.IdleTimeout (30 s) without grants or waiters, or by Close
// when it holds none.
//
// The session's etcd lease is half again as long as the class's TTL (at
// least one second more), and is kept alive every (lease - TTL)/2, so while
// keepalives succeed it always outlives a grant's TTL counted from the
// acquire or renew that was sent last. Each keepalive's send time (not its
// reply's arrival) anchors the lower bound of the lease's expiry that the
// store tracks; an acquire or renew first refreshes the lease if that bound
// is less than a TTL away. If etcd answers that the lease is gone, or the
// bound passes without a successful keepalive, the session is lost: every
// grant on it is lost at once, their Grant.Lost channels close (so a
// leasehold.Client cancels those leases' contexts), the store revokes the
// lease in case it still lives, and the next acquire starts a new session.
//
// A grant's own TTL is enforced by the Store that made it: a grant not
// renewed within its TTL is deleted, token-checked, by the session's
// housekeeping, as if a per-key lease had expired. A holder whose process
// dies or is cut off loses its keys when the session's etcd lease expires:
// after at most 1.5 x TTL (at least TTL + 1 s), plus etcd's expiry check
// (up to 0.5 s), plus two raft commits: the revocation, then the next
// holder's grant, which the revocation's watch event wakes (milliseconds on
// a healthy cluster; the fault harness allows them 100 ms). Close stops the
// keepalives without releasing: grants end by their etcd lease.
//
// # Storage, tokens and fencing
//
// Under Options.Prefix (default "leasehold/"), a key k has a queue of
// entries <prefix><escaped k>/q/<lease>-<slot>, where escaping turns '%' and
// '/' into %25 and %2F, lease is the session's etcd lease id (16 hex
// digits) and slot is the lowest slot of k that the session has free (not
// used by one of its grants, waiters, acquires in flight or entries left to
// clean up). An entry's value is JSON with the first 128 bits of SHA-256 of
// the owner id (the id itself, the owner's proof, is never stored) and the
// holder's label. The oldest entry (lowest CreateRevision) holds the key;
// the others wait. As an escaped key holds no '/', no key's names are a
// prefix of another key's: the lock "a" never ranges over "a/x" (the flaw of
// etcd's concurrency.Mutex).
//
// Entries are named by session and slot, not by owner, because names are
// not free in etcd: a deleted key stays in etcd's in-memory index (a
// tombstone, with its history) until a compaction, which is off by
// default, and every range over a key's queue (each acquire's compare and
// read) walks every name the queue ever had since. A leasehold.Client draws
// a fresh owner id for each acquire, so naming entries by owner made each
// acquisition a new name and each acquire of a key slower than the last:
// with one worker, a Client cost 1.18-1.27 times the CPU per cycle of
// concurrency.Mutex (which reuses one key per session), and 1.01-1.08 times
// with slots (etcd/bench's BenchmarkRatio). With slots a key's names are bounded
// by the grants and waiters one session has on it at once, times the
// sessions it has seen since the last compaction (a session lives while it
// has grants, and Options.IdleTimeout after). Run etcd with
// --auto-compaction-retention to bound that too.
//
// Because a name is reused, its CreateRevision (the token) tells one use
// from the next, and its value tells owners apart: renew, release and the
// clean-up of a lost acquire compare both.
//
// Acquire is one transaction: If(the queue is empty) Then(Put(entry, owner
// hash and label, session lease)) Else(Get(the oldest entry)). The fencing token is the
// holding entry's CreateRevision: a cluster-wide revision that only grows,
// across release, expiry, restart and leader failover (Info.SafeTokens is
// true), but goes back when the cluster is restored from a snapshot without
// --bump-revision (TokenCaveat; restore with etcdutl snapshot restore
// --bump-revision N --mark-compacted, N above the revisions written since
// the snapshot); entries are served oldest first, so each holder's token is greater
// than the previous one's. A *leasehold.HeldError carries the holder's label
// and token; its Remaining is 0, because the holder's time left would cost
// another round trip. Holder does report it (whole seconds of the holder's
// session lease).
//
// Renew is one read-only transaction comparing the entry's CreateRevision
// with the token and, for a grant this Store did not make, its value with
// the owner's hash (two byte-order compares that need the owner but not the
// label; a grant of this Store has its owner checked against the Store's
// record of it, in the process: an entry's value is written once, when it
// is created, so its CreateRevision names its owner); it does not extend the
// etcd lease (the session's keepalive does) but the grant's deadline. It is
// a linearizable read (a count of the entry rides along: etcd answers a
// compare-only transaction from the member it reaches, which may not yet
// have applied a grant made a moment before). RenewMany checks up to 64
// grants per transaction, through raft. Release of a grant this Store
// tracks (same owner, token and key, deadline not passed) is a plain
// Delete(entry), as concurrency.Mutex.Unlock, after the owner and token are
// checked in the process: the session keeps the entry's name from any other
// use until etcd answers the delete (and for good if it does not), so the
// delete finds this grant's entry or nothing. Release of any other grant is
// If(CreateRevision(entry) == token, owner's value) Then(Delete(entry)).
// Either way a stale holder cannot delete a newer holder's entry, even under
// the same name (etcd issue #22082), and nobody without the owner id can. A
// cycle of Acquire and Release thus sends what Mutex's Lock and Unlock send:
// one transaction and one delete (etcd/bench's BenchmarkCalls). A renew of
// a grant that expired but that nobody has taken since fails: the store
// deletes it. A grant's Private names its entry; a grant rebuilt from its
// key, owner and token in another process (Info.PortableGrants) is found by
// one read of its key's queue for that CreateRevision and owner.
//
// IsOwner is the compare that guards a write in an etcd transaction by a
// grant (the generalisation of concurrency.Mutex.IsOwner); IsOwnerLookup
// gives it for a rebuilt grant. FencedTxn keeps the highest accepted token
// in a fence key and refuses writes with lower ones, optionally also
// requiring IsOwner.
//
// # Waiting
//
// Waiting through the Waiter capability (AcquireWait, which
// leasehold.Client uses) is FIFO, as in concurrency.Mutex: one transaction
// puts the waiter's entry and reads the oldest (when the key is free, that
// is the whole acquire); a queued waiter watches the entry created just
// before its own and holds the key once no older entry remains. A release
// costs the next waiter one read. Watches start at the current revision and
// are confirmed by a read, so etcd delivers the wake-up at once (a watch
// from a past revision, as Mutex opens, waits for etcd's 100 ms catch-up
// loop). Acquire never jumps the queue. Subscribe (the Notifier capability)
// wakes on deletes in the key's queue, through one watch established before
// it returns.
//
// # Errors
//
// Failures are *leasehold.StoreError with a hint for the usual causes: no
// leader (no quorum; requests carry etcd's require-leader flag, so a member
// cut off from the leader answers at once instead of hanging), a request
// larger than --max-request-bytes, authentication or permission failures.
// An error of the caller's context is the context's; a deadline that passed
// while the client had no working connection says so in its message.
//
// A key in a queue that leasehold could not have written (its name is not
// one EntryKey makes, it has no lease or another lease than its name's, or
// its value is not one the store writes) is refused by Acquire,
// AcquireWait, Holder and List as a *leasehold.ForeignRecordError naming it
// (leasehold.ErrForeignRecord), inside a *leasehold.StoreError: reported as
// a holder, a planted key without a lease would hold the key for ever. A
// revision that is not positive is refused (ErrTokensExhausted if it
// wrapped), never converted to a token.
package etcd
