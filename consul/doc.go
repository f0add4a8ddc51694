// Package consul is a leasehold store on Consul's KV store and sessions,
// through the official client (github.com/hashicorp/consul/api), for locks
// on the Consul cluster a deployment already runs. Open it with OpenURL
// (consul://host:port/prefix?token=...) or New on a client of your own.
//
// # Sessions
//
// A Store keeps one Consul session per TTL class (TTLs are rounded up to
// whole seconds): a client that uses one TTL has one session per store,
// shared by all its grants, renewed by one goroutine, so holding 10,000
// leases costs one session renewal per period, not 10,000. The session is
// created on the first acquire of its class (one more round trip, once) and
// destroyed after Options.IdleTimeout (30 s) without grants, or by Close when
// it holds none. It is created with:
//
//   - a TTL S of 1.5 x the class (at least the class + 1 s, and at least
//     Consul's minimum of 10 s), renewed every (S - TTL)/2. Each renewal's
//     send time anchors a lower bound of the session's invalidation (Consul
//     invalidates a session no earlier than S after the leader took its last
//     renewal; in practice up to 2 x S); an acquire or renew first renews
//     the session itself if that bound is less than a TTL away, so while the
//     cluster answers, the session outlives every grant's TTL.
//   - no health checks (NodeChecks empty). Consul's default ties a session to
//     its agent's serfHealth check, which invalidates it at once when the
//     agent's node flaps, before any holder could know. Without checks, a
//     session ends only by its TTL, by a destroy, or with its node's removal
//     from the catalog.
//   - behavior release: an invalidated session's entries are unlocked, not
//     deleted.
//   - lock-delay set explicitly to the class's TTL (at most Consul's 60 s).
//     See Lock-delay below.
//
// A grant's own TTL is enforced by the Store that made it: a grant not
// renewed within its TTL is unlocked, index-checked, by the session's
// housekeeping, as if a per-key lease had expired. This is why a TTL below
// Consul's 10 s session minimum is accepted (MinTTL is 1 s): the grant ends
// at its own TTL while its Store runs; the session, a 10 s one, is only the
// backstop for a holder whose process dies, stops or is cut off, whose keys
// then free when Consul invalidates the session (between S and 2 x S after
// its last renewal) plus the lock-delay: 21 s for a 1 s TTL, measured by
// this package's partition test. MaxTTL is 16 h, whose session (24 h) is
// Consul's longest.
//
// If Consul answers that the session is gone (a renewal's 404, a blocking
// query on the session that finds it missing, a lock refused for an invalid
// session), or the invalidation bound passes without a successful renewal,
// the session is lost: every grant on it is lost at once, their Grant.Lost
// channels close (a leasehold.Client cancels those leases' contexts), the
// store destroys the session in case it still lives, and the next acquire
// creates a new one. Close stops the renewals without releasing: grants end
// with the session's TTL.
//
// # Storage, tokens and fencing
//
// Under Options.Prefix (default "leasehold/"), a key k is one KV entry
// <prefix><escaped k>, where escaping keeps letters, digits and the bytes in
// "-_.:@+=," and turns every other byte into ~XX (so a key has no '/', no space, nothing
// Consul or an HTTP path would change; '%' is not used because Consul's KV
// endpoint decodes %XX once more when it checks a name). Its value is JSON
// with the grant's token, the holder's label and the first 128 bits of
// SHA-256 of the owner id (the id itself, the owner's proof, is never
// stored), and its flags are Flags.
//
// Acquire reads the entry and, if no session holds it, locks it
// (Consul's ?acquire=) in one transaction conditioned on the entry being as
// read: [check-not-exists] or [check-index ModifyIndex], then [lock]. The
// condition matters because the session is shared: Consul lets a session
// lock again an entry it already holds, so an unconditioned lock would let
// a second acquire through the same store take a held key, or let a lock
// whose reply was lost land later over another grant. Such an abandoned
// lock, if it lands, is found and unlocked by housekeeping by its owner
// tag, never by the key alone.
//
// The fencing token is chosen by the acquirer and written in the entry's
// value by the lock itself:
//
//	token = max(the entry's token + 1, the store's highest token + 1,
//	            the agent's clock in µs)
//
// The lock's transaction is conditioned on the entry being as read, so two
// acquirers that read the same entry cannot both write the token they
// computed from it: per key, tokens strictly increase, as with a counter
// bumped by compare-and-swap. The entry keeps its last token when it is
// released or its session invalidated. Why not the entry's ModifyIndex (a
// Raft index, the token of earlier versions)? It only grows while the
// cluster keeps its Raft state, and starts again near zero when that state
// is lost: a -dev agent restarted (it keeps everything in memory, the way
// most people first run Consul), every server's data folder wiped, a
// cluster built anew. Tokens then went backwards, and a fenced resource
// refused every new holder until the index caught up. The floors survive
// that loss, as the S3 store's (max(counter + 1, the server's Date in µs))
// and the Redis store's (its counter floored by the server's TIME) do:
//
//   - the agent's clock: the latest Date header of the store's responses,
//     advanced by the local monotonic clock since (a lower bound of the
//     agent's time; Date is whole seconds, so within about a second). A
//     grant after a loss of the cluster's data is above every earlier
//     token unless it comes within the same second of the agent's clock
//     as the key's last grant before the loss, or the agent's clock was
//     set back. A Store made by New on a client of the caller's sees no
//     headers and uses the local wall clock instead (OpenURL's stores use
//     the agent's);
//   - the store's highest token: while one Store value runs, its grants'
//     tokens increase across the loss, whatever the clocks say (a token
//     more than an hour ahead of the clock, a planted value, does not
//     raise it);
//   - the entry's token (and its ModifyIndex, for an entry written before
//     tokens were stored): tokens increase per key, also when clocks step
//     back, for as long as the entry exists (deleting it, someone else's
//     doing, leaves the two floors above).
//
// Upgrading from the version whose token was the ModifyIndex: that version
// released a key by unlocking it with no value and no flags, so a key it
// released is an unlocked entry (no Session) with flags 0 and an empty
// value. Such an entry is taken for a legacy released entry whose previous
// token is its ModifyIndex: the next grant's token is max(ModifyIndex + 1,
// the store's highest token + 1, the agent's clock in µs), still greater.
// Any other entry with flags other than Flags is foreign and refused. Old
// and new versions must not run side by side on one prefix: an old
// client's token is a ModifyIndex, far below a new client's clock-floored
// token, so its writes would be refused by a fenced resource after a new
// grant, and its grants could not be ordered with the new ones. Stop every
// old client before starting a new one on the prefix.
//
// An entry whose token is the largest a uint64 holds (a planted or
// corrupted value) is refused with leasehold.ErrTokensExhausted rather than
// wrapped; nothing is held. The entry's ModifyIndex is still what release
// and housekeeping check (check-index) so that a stale holder never unlocks
// another's grant.
//
// Renew confirms, by one consistent read, that the entry is still locked by
// the store's session, with the grant's token and owner tag in its value; it extends the grant's own deadline (the session's renewals are the
// session goroutine's). A grant that expired is refused, even if nobody took
// it since. Release is [check-index index, unlock session] (Consul's
// ?release=), index being the entry's ModifyIndex after the grant's lock:
// any write to the entry since the grant changes it, so a stale holder never unlocks another's grant, even one
// held by the same session. A grant made by another Store value (the CLI's
// one-shot commands: PortableGrants) is renewed by renewing the session
// that locks its entry and confirming the entry, and released after reading
// the entry for its owner tag and session. Such a foreign renewal assumes
// the Store that made the grant is closed: an open one still unlocks the
// grant at its own deadline.
//
// # Lock-delay
//
// Consul's lock-delay (15 s by default) is Chubby's: when a session is
// invalidated, its holder may not know yet (partitioned, paused, slow to
// notice) and may still act on its lock, so Consul refuses to lock the
// entries it released for the lock-delay, to give the old holder time to
// notice and stop. This store sets it to the TTL class (at most 60 s):
//
//   - An invalidation by TTL cannot come before the holder's own deadline,
//     which leasehold's client sets at t_send + TTL x (1 - rho) - margin from
//     the send time of the last successful acquire or renew, and enforces by
//     cancelling the lease's context: the session's invalidation bound was
//     at least t_send + TTL when that request was sent. No delay is needed
//     there.
//   - An early invalidation (an operator's destroy, the agent's node removed
//     from the catalog) comes after the holder's last successful renewal was
//     sent (that renewal read the entry locked), so the holder's deadline is
//     less than one TTL after the invalidation: a lock-delay of one TTL keeps
//     the next holder out until then.
//
// The lock-delay lives in each server's memory (not in snapshots): a restart
// of the servers right after an early invalidation forgets it, and TTLs above
// 60 s get 60 s. Both can only let a new holder in while an old one still
// believes it holds the key; they do not touch the token's order, so a fenced
// resource stays safe. During a lock-delay Acquire returns a
// *leasehold.HeldError saying so.
//
// # After Consul loses its data
//
// A -dev agent keeps its Raft log, entries, sessions and lock-delays in
// memory; a restart loses them all, as does wiping every server's data
// folder. Nothing then holds a key: another client can lock it at once
// (fault harness F9b, restart without data: see docs/safety.md for the
// measured figure), while the holder still believes in its lease until it
// learns of the loss. Its tokens stay above the old ones (see Storage,
// tokens and fencing), so a fenced resource refuses the old holder and
// accepts the new one, except for a grant within the same second of the
// agent's clock as the key's last grant. What the store does:
//
//   - OpenURL asks the agent whether it is a -dev agent (agent:read; an
//     agent that does not say is taken for a normal one). On one, Info's
//     SafeTokens is false and its TokenCaveat starts with DevCaveat, so
//     the CLI's run warns.
//   - Every renewal's consistent read of the grant's entry compares the
//     read's Raft index (the entry's ModifyIndex, or the KV table's if the
//     entry is gone) with the index the grant's lock wrote: while the
//     cluster keeps its data it cannot be lower, so a lower one is a loss
//     of the cluster's data. (Indexes of different keys are not compared:
//     each key's read reports that key's index.) A session that Consul says
//     is gone is checked the same way on one of its grants, and on a -dev
//     agent taken for a loss: there, any session of the store that vanishes
//     (destroyed by someone, expired after a stall, or lost in a restart)
//     ends every lease of the store, in every TTL class, not only that
//     session's. This fails safe (a lease ends that may still have been
//     held; none is kept that may not be), and DevCaveat says so.
//   - On a loss, every lease of the store ends at once, in every TTL class
//     (their Grant.Lost channels close, LostReason and refused renewals
//     say ErrDataLost): the holder cannot know whether its key is still
//     its own. Keys can be acquired again at once.
//
// A loss is found at the holder's next renewal or session renewal, not
// before: until then a holder and the client that took its key over can
// both act, which only a fence (the token) keeps apart.
//
// # Waiting
//
// Subscribe (leasehold.Notifier) follows the key's entry with Consul blocking
// queries from the index of a first read, made before it returns, so a
// release after it returns is never missed; it signals when the entry is
// left unlocked. Watch (leasehold.Watcher) signals every change of the
// entry. There is no FIFO queue (no leasehold.Waiter): waiters retry with
// backoff, woken by the blocking query. List (leasehold.Lister) reads the
// prefix.
//
// # Safety matrix
//
//	whose clock ends a lease   While the holder's Store runs: that Store's
//	                           monotonic clock (housekeeping unlocks a grant
//	                           not renewed within its TTL). When the holder's
//	                           process dies, stops or is cut off: the Consul
//	                           leader's session timer (invalidation S to 2 x S
//	                           after the last session renewal), then the
//	                           lock-delay. In every case the holder's own
//	                           deadline, from the send time of its last
//	                           successful renewal, comes first.
//	what a paused holder can   Nothing that a fence accepts once a later grant
//	still do                   has written. Without a fence: a holder paused
//	                           past its deadline resumes believing in the lease
//	                           only until its client's clock check (its context
//	                           is cancelled, Lease.Checkpoint fails); a write it
//	                           had already sent may land after the next grant.
//	                           The next grant cannot come before the holder's
//	                           deadline: its session outlives that deadline,
//	                           and its Store, paused with it, cannot unlock.
//	where the token lives      The entry's value, written by the lock's own
//	                           transaction, conditioned on the entry as read;
//	                           the entry keeps it after release.
//	why it cannot go backwards Each token exceeds the entry's last one (the
//	                           conditioned lock), the Store's highest one and
//	                           the agent's clock in µs; after the cluster
//	                           loses its data (entries gone) the clock floor
//	                           still puts a new token above the old ones,
//	                           except within the same second of the agent's
//	                           clock as the key's last grant (TokenCaveat).
//
// # Errors
//
// Failures are *leasehold.StoreError naming the store, the operation and the
// key, with a hint for the usual causes: the agent unreachable, no cluster
// leader, an ACL token refused (with the permissions the store needs:
// key_prefix write on the prefix, session write on the agent's node), a
// session lost. A key locked by a session that is not leasehold's is a
// *leasehold.HeldError naming that session. An entry under the prefix that
// is not a valid leasehold value (other flags, not leasehold's JSON, an owner
// tag that is not 32 lower-case hex digits, a session TTL or lock-delay out
// of Consul's bounds, a token that does not fit a uint64) is refused, left
// as it is, with a *leasehold.ForeignRecordError naming it inside a
// *leasehold.StoreError; so is a session renewed for a foreign grant whose
// TTL is not between 1 s and 24 h. An error of the caller's context is the
// context's.
package consul
