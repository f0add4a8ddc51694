// Package kube is a leasehold store on Kubernetes Lease objects
// (coordination.k8s.io/v1), through client-go: the lock most Go
// controllers already have, with a fencing token it lacks.
//
// Each key has one Lease in a namespace the user names, "leasehold-" and
// 40 hex digits of the key's SHA-256 ([LeaseName]), labelled
// app.kubernetes.io/managed-by=leasehold. Its annotations
// (leasehold-go.github.io/...) are the store's record: the key, held or
// released, the owner (a hash of the owner id), the token, the TTL in ms,
// the label and a random write id. Its spec says the same for other
// readers: holderIdentity (the label), leaseDurationSeconds (the TTL
// rounded up to whole seconds), acquireTime and renewTime (this host's
// clock, never read by the store) and leaseTransitions (counted on; see
// below). Every write is a compare-and-swap on resourceVersion:
//
//   - acquire reads the Lease; if it is absent it creates it (of racing
//     creates one lands), and if it is released or judged expired it
//     updates it on the resourceVersion read (of racing updates one lands:
//     409 Conflict for the others); a key this store released last is
//     updated at once, on the resourceVersion its release left, without
//     the read (the update lands only if nobody wrote the Lease since, so
//     the Lease is then what the read would have shown; otherwise the
//     acquire reads and goes on as above);
//   - renew is a JSON merge patch and release an update of the whole
//     Lease, both carrying the resourceVersion of the grant's last write
//     (or of a read that shows its owner and token) as their
//     precondition; release marks the Lease released and keeps its
//     token. The store never deletes a Lease.
//
// # Safety
//
//	| question                          | answer |
//	| --------------------------------- | ------ |
//	| whose clock ends a lease          | nobody's wall clock: a rival judges a lease expired only after it has seen the Lease's resourceVersion unchanged for the lease's TTL on its own monotonic clock, from the arrival of the read that first showed it (as client-go's leaderelection does); renewTime is never read. A store that first looks at a key abandoned long ago still waits one TTL |
//	| TTLs                              | 1 s to 24 h (Lease durations are whole seconds); a rival holds off up to a TTL plus its polling interval after the holder's last renewal |
//	| what a paused holder can still do | nothing once another owner took the key: renew and release carry a resourceVersion precondition the takeover changed; an expired lease that nobody took is renewed, keeping its token |
//	| where the token lives             | in the Lease's token annotation, kept by release |
//	| why it cannot go backwards        | a new token is max(the Lease's last token, a resourceVersion read before the write) + 1: the Lease's own resourceVersion, or when the Lease is absent that of a consistent list of Leases; resourceVersions of one resource are comparable integers (Kubernetes 1.35+) that every write raises, and every token is at most the resourceVersion of the write that set it, so deleting or recreating the Lease (someone else's doing) cannot lower the next token. It can go back only if the cluster's storage is restored from a backup to an older revision |
//	| failed acquire                    | a write that lost its compare-and-swap used no token: the next one is computed from a later read |
//	| token at 2^64-1                   | refused with an error wrapping [leasehold.ErrTokensExhausted]; a Lease whose token is above its own resourceVersion (no store writes that) is refused as foreign |
//
// leaseTransitions is not a fence: it is an int32 that any client may
// write, that client-go counts only on a change of holderIdentity, and
// that starts again at 0 when the Lease is deleted. The store counts it on
// for other readers and never reads it.
//
// Clock-free expiry has a price: a lease whose holder died is free only
// one TTL after a rival first saw it, so a process that starts after the
// holder died waits a full TTL; and a store remembers its observations for
// at most 4096 Leases (forgetting one only makes it wait longer). Expiry
// changes nothing on the server, so no watch event tells of it: waiters
// wake on releases and takeovers through the watch API ([Store.Subscribe])
// and find expiries by polling.
//
// # Open
//
// [New] (and [OpenURL]) check the server before anything is held: the
// credentials (SelfSubjectReview: 401 is "credentials refused"), a
// dry-run create of a Lease (the namespace exists, create is allowed) and
// a SelfSubjectAccessReview for each verb the store uses (get, list,
// watch, create, update, patch), naming the verbs refused, the user and
// the namespace. Each is a [*leasehold.StoreError].
//
// A rest.Config that sets no QPS or RateLimiter gets no client-side rate
// limit: client-go's default (5 requests/s, bursts of 10) would queue an
// acquire or a renewal behind a waiter's polls past the holder's
// deadline. The store dials its own connections (rest.Config.Dial, unless
// Options.HTTPClient is given), so client-go shares no cached transport
// between stores and Close closes them all.
//
// # Values read back
//
// A Lease at a key's name that the store did not write (no format
// annotation: someone else's, say a controller's), one of another key or
// format, or one with a value out of range (a token of 0, above 2^64-1 or
// above its resourceVersion; an owner that is not 32 hex digits; a TTL
// outside 1 s to 24 h; a label over 1 KiB; owner or TTL on a released
// Lease) is refused with a [*leasehold.ForeignRecordError] naming the
// namespace and Lease, inside a [*leasehold.StoreError], and left alone.
//
// Tests run on kube-apiserver over etcd (scripts/install/kube-apiserver.sh
// and etcd.sh); a missing binary fails them.
package kube
