// Package election elects one leader among processes over any leasehold
// store. A leader is the holder of the lease on the election's key, and its
// epoch is that lease's fencing token: epochs strictly increase from one
// leader to the next, so the leader's writes can be fenced by epoch (see the
// fence package), and a deposed leader's late write is refused.
//
// [Election.Campaign] blocks until this process leads and returns its
// [Leadership], whose context is cancelled, with a cause, the moment
// leadership ends: resigned, refused on renewal, or past the holder's
// deadline (the lease's rules; see the leasehold package). [Election.Run]
// is the leader loop: campaign, lead, and campaign again after a loss, with
// a backoff. [Election.Observe] streams the election's states (who leads,
// with which epoch, or nobody), from the store's native watch where it has
// one ([leasehold.Watcher]) and by reading the holder at a bounded interval
// where it does not.
//
// The election's key is an ordinary lease key: campaigning on a key that
// someone holds as a plain lease is allowed, and waits for that lease like
// any acquire.
package election
