// Package zookeeper is a leasehold store on a ZooKeeper ensemble (3.5.3 or
// later), through github.com/go-zookeeper/zk: the lock recipe of
// ZooKeeper's documentation, with fencing tokens, FIFO waiting and the
// lost-answer hazards handled.
//
// # Sessions
//
// A Store keeps one ZooKeeper session per TTL class (TTLs rounded up to
// 100 ms), shared by every grant and waiter of that class: holding 10,000
// leases costs one connection and one ping every third of a session
// timeout, not 10,000. The session is established on the first acquire of
// its class and closed after Options.IdleTimeout (30 s) without grants or
// waiters. A session asks for a timeout of twice its TTL class; the
// ensemble clamps what a client asks into [minSessionTimeout,
// maxSessionTimeout] (by default 2 and 20 ticks), so New asks a server for
// those bounds first (Bounds) and the store accepts TTLs from the minimum
// session timeout to half the maximum (Info.MinTTL, Info.MaxTTL); any
// other TTL is refused with leasehold.ErrInvalidTTL, and a session whose
// negotiated timeout comes back short of twice its class is refused with
// ErrSessionTimeout.
//
// # Timing: whose clock ends a lease
//
// ZooKeeper has no per-node TTL: an ephemeral node lives as long as its
// session, and the session lives while the ensemble's leader hears from
// the client within the session timeout. Two clocks therefore end a lease:
//
//   - The holder's Store ends a grant not renewed within its TTL: its
//     session's housekeeping deletes the node at the grant's deadline (the
//     send time of the last confirmed acquire or renew, plus the class), as
//     a per-node TTL would. This is what frees the key of a live process
//     that stopped renewing.
//   - The leader's clock ends the session of a holder that died or was cut
//     off: at least one session timeout (2 x TTL) after the last time the
//     leader heard from it, rounded up to the next tick. Every node of the
//     session goes in the one closeSession transaction, so every grant on
//     it ends at once; its Grant.Lost channels close as soon as the client
//     learns of the expiry (on reconnecting), and leasehold's client then
//     cancels those leases' contexts.
//
// Renew is one write through the leader: a multi holding one check of the
// grant's node. The leader checks the session first (it refuses an expired
// or closing session) and the node's existence, so a confirmed renewal
// proves the grant stood after the request was sent. Renew does not touch
// the session (the client library's pings do); it moves the grant's own
// deadline. leasehold's client computes the holder's deadline from the
// renewal's send time (TTL x (1 - rho) - margin). Why twice the TTL: the
// client library pings every third of the session timeout, and a follower
// relays the pings it receives to the leader at least every half tick, so
// when a renewal sent at t0 is confirmed the leader has heard from the
// session no earlier than t0 - timeout/3 - tick/2; with a timeout of 2 x TTL
// the leader cannot expire it before t0 + 4/3 TTL - tick/2, which is after
// the holder's deadline t0 + TTL whenever TTL > 1.5 ticks (MinTTL, the
// minimum session timeout, is 2 ticks unless the ensemble was configured
// below ZooKeeper's default). A leader change only extends sessions: a new
// leader restarts every session's timeout when it takes over.
//
// # Storage, tokens and fencing
//
// Under the base node (the URL's chroot, default /leasehold), a key k has
// one parent node, <base>/<escaped k>, a container node carrying the data
// "leasehold key", whose children are the key's queue: ephemeral
// sequential nodes named <id>-<sequence>, where id is the first 128 bits of
// SHA-256 of the attempt's owner id (the id itself, the owner's proof, is
// never stored) and the node's data is the holder's label. The child with
// the lowest sequence holds the key. Escaping writes every byte outside
// ASCII letters, digits and "-_.~" as %XX, so an escaped key is one path
// component and no key's node is a prefix of another key's: "a" never
// ranges over "a/x". ZooKeeper deletes a container once its last child is
// gone (every minute by default), so a million one-off keys do not leave a
// million nodes; this needs ZooKeeper 3.5.3 or later.
//
// The fencing token is the holding node's creation zxid (Czxid). A zxid
// is the ensemble's transaction id: the leader's epoch in the high 32 bits
// and a counter in the low 32, assigned in the one order every server
// applies transactions in. It only grows: across release and expiry (a
// later node is a later transaction), across restarts (servers recover
// the last zxid and epoch from their logs and snapshots), and across
// leader changes (a new leader's epoch is greater than every earlier one,
// and the leader forces a new election before the counter of an epoch
// wraps). Within one parent, sequence order is creation order, so each
// holder's token is greater than the previous holder's; the parent may be
// deleted and made again, restarting the sequence at 0, which is why the
// token is the zxid and not the sequence. Tokens go back only if the
// ensemble's data is wiped or restored from an older snapshot
// (TokenCaveat).
//
// Acquire creates the attempt's node and lists the queue (and reads its
// own node's Czxid at the same time): at the head, the key is the
// caller's; otherwise the node is deleted and a *leasehold.HeldError names
// the holder's label and token. Acquire never jumps the queue. A list that
// finds a key's parent to be leasehold's (its data the mark, not
// ephemeral, every child named as leasehold names them) has the store
// remember the parent by its creation zxid; the next acquire of that key
// then creates its node in one multi with a write of the parent's mark
// (the data it holds already), whose answer is the parent's stat after
// the transaction: its modification zxid is the transaction's, so the new
// node's Czxid, and its child count 1 says the node is alone in the queue,
// so the head. An uncontended acquire is then one request, and a cycle
// two (go-zookeeper's zk.Lock sends three, the store sent four before);
// with other nodes in the queue the acquire lists it, and on a parent
// whose creation zxid is not the one remembered (deleted and made again
// since) it lists the queue and reads its node, as on a parent it has not
// seen. The store writes a parent's data only after verifying that parent;
// what it cannot tell apart is a node that someone deleted and replaced
// with their own between that check and the multi (it gets the mark). Release
// deletes the grant's node; a stale grant cannot delete a newer holder's
// node, since a node's name carries its own attempt's id and its token is
// checked against the grants the store keeps. A renew of a grant whose
// deadline passed fails, even if housekeeping has not deleted it yet.
//
// # Lost answers ("protected mode")
//
// A create that succeeded on the server but whose answer was lost (the
// connection broke) leaves a node the client does not know of: in a lock
// queue, an orphan that blocks the key until its session ends. Every node
// is named with its attempt's own id, so after such a loss the store syncs
// and lists the parent and adopts the node it finds (or, if it cannot
// look, has housekeeping delete the attempt's nodes later); an acquire
// whose caller left before the answer deletes the node it made. go-zookeeper's
// CreateProtectedEphemeralSequential does not do this safely: it names the
// node with a fresh random GUID the caller never learns, retries the
// create after a session expiry (on the new session the client opened by
// itself), looks without a sync (a create still in the leader's pipeline
// is missed), and returns a path without the node's zxid. go-zookeeper's
// Conn also opens a new session by itself after an expiry; the store's
// dialer refuses that, so a grant's node never silently changes session.
//
// # Waiting
//
// Waiting through the Waiter capability (AcquireWait, which
// leasehold.Client uses) is FIFO without a herd: the waiter's node stays in
// the queue and the waiter watches only the node just before its own; a
// release wakes one waiter, which lists the queue again. Subscribe (the
// Notifier capability) and Watch (Watcher) set a children watch on the
// key's parent, again after each event.
//
// # Safety matrix
//
//	whose clock ends a lease   the holder's Store (grant deadline, from the renewal's send time);
//	                           the leader's (session timeout, 2 x TTL) when the holder is dead or cut off
//	what a paused holder can   nothing the fence accepts after its successor's grant: its lease context
//	still do                   is cancelled at its deadline (before the leader can expire the session,
//	                           by the margin above); its renewals fail once its node is gone
//	where the token lives      the Czxid of the holder's node, in the ensemble's replicated log
//	why it cannot go back      zxids only grow (epoch above counter; logs survive restarts; a new
//	                           leader's epoch is higher); only a wipe or an old snapshot breaks it
//	portable grants            no: a node belongs to the session of the Store that made it
//	what the ensemble can      after a pause of the whole ensemble, ZooKeeper 3.8.0's leader can
//	break by itself            stop committing (nothing is granted, renewed or expired) until it
//	                           is restarted; holders lose their grants at their deadlines, none
//	                           is granted twice (see faults/README.md)
//
// # Errors
//
// Failures are *leasehold.StoreError naming the store, the operation, the
// node path and a hint for the usual causes: no server reachable, an ACL
// that refuses the client (the URL may carry user:password for digest
// authentication), a node in the way that leasehold did not create
// (ErrForeignNode, which matches leasehold.ErrForeignRecord, with a
// *leasehold.ForeignRecordError naming the node: a parent that is not its
// container, a child not named as it names them, "<id>-<sequence>" with
// ZooKeeper's ten-digit non-negative int32 sequence, or a queue's head or a
// waiter's predecessor that is not ephemeral and so would never leave; the
// store never deletes or reuses such nodes), an expired session
// (ErrSessionLost). A token is a node's creation zxid; one that is not
// positive is refused (ErrTokensExhausted if negative), never converted.
// An error of the caller's context is the context's.
package zookeeper
