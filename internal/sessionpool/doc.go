// Package sessionpool is the session kernel of the etcd, Consul and
// ZooKeeper stores: each keeps its leases on server sessions, one per TTL
// class, shared by every lease of that class. What a session is on the
// server, and the calls that make, refresh and end it, are the store's;
// the bookkeeping and its locking rules are here, once.
//
// A [Pool] maps a TTL class to its session under one mutex, which also
// guards the store's closed flag. [Pool.Use] returns the class's session
// with a reference taken: the first caller creates and sets it up, the
// others wait for its outcome, and a waiter whose creator gave up because
// the creator's own context ended tries again. A session removes itself
// with [Pool.Forget] when it is lost or torn down; until it has, a Use
// that finds it gone (its Hold fails) puts a new session in its place.
// [OnSession] runs an acquire on a class's session, once more on a new
// one if the session was lost under it.
//
// The Pool is also the store's life: [Pool.Ctx] is its background
// context, goroutines started with [Pool.Go] (or counted by
// [Pool.WatchContext] and [Pool.WhileOpen]) are waited for by
// [Pool.Shut], the store's Close. [Pool.WhileOpen] runs code under the
// mutex unless the pool is closed, so that either Shut sees what the code
// did or the code sees the pool closed.
//
// A [Core], embedded in each store's session, keeps the session's state:
// its set-up outcome ([Core.SetUpWith], Up, UpErr), its references
// ([Core.Hold], [Core.Drop]), whether it is lost ([Core.MarkLost], Done)
// or gone, the lower bound of its end on the server ([Core.Extend],
// [Core.Fresh], the [Core.KeepAlive] loop), the table of its grants with
// their deadlines ([Core.Track], [Core.Renewed], [Core.Untrack],
// [Core.Take] and [Core.Settle] for a release whose answer may be lost),
// the acquires in progress, and the orphans (grants past their deadline,
// or the possible result of a request whose answer was lost) that
// housekeeping cleans up ([Core.Sweep] and [Core.IdleOut] for the etcd and
// Consul stores' periodic housekeeping, [Core.Plan] and [Core.Rest] for
// ZooKeeper's, which sleeps until the next deadline).
//
// Locking: the Pool's mutex is taken before a session's (Core.Mu), never
// after; a session calls Forget only with its own mutex released. The
// store may keep its own state under Core.Mu (etcd's slots, ZooKeeper's
// connection) and use the Locked methods while holding it.
//
// [Housekeep] is the loop of a session's periodic housekeeping goroutine,
// and [SweepPeriod] its period.
package sessionpool
