// Package leasehold gives distributed leases with fencing tokens over the stores
// people already run.
//
// A [Client] acquires a [Lease] on a key from a [Store]. The store is the
// atomic-claim primitive (an embedded SQLite file, Redis, PostgreSQL, etcd, ...);
// the client owns the lifecycle, the same for every store: unguessable owner ids,
// waiting with jittered backoff or store notifications, renewal at about a third
// of the TTL, a conservative holder-side deadline, and cancellation of the
// lease's context the moment ownership ends.
//
// A lease alone is a liveness lock: it stops two workers from wasting effort on
// the same item most of the time. It is not a safety lock, because a holder can
// pause (GC, swap, a stopped VM) past its lease and wake up still believing it
// holds it. Safety comes from fencing: every grant carries a [Grant.Token] that is
// strictly greater than every earlier token for the key, and the resource
// rejects writes with a token lower than the highest it has seen. The fence
// package has helpers for SQL rows, HTTP services and tests.
//
// # Time
//
// The store's clock ends a lease. The holder's view is a conservative guess:
// before sending an acquire or renew it reads its monotonic clock (t_send) and
// takes deadline = t_send + TTL*(1-rho) - margin. It never re-anchors on the
// reply's arrival. When the deadline passes without a successful renewal, or a
// renewal is refused, the lease's context is cancelled with a cause
// ([ErrExpired] or [ErrNotHeld], both wrapped in a [*LostError]).
package leasehold
