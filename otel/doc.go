// Package otel reports a leasehold client's events as OpenTelemetry
// metrics and spans. It is its own module, so that users of leasehold who
// do not use OpenTelemetry never download it.
//
// Give the observer to the client (with the slog observer, through
// leasehold.Observers, to log as well), and to the fence helpers:
//
//	obs, err := otel.New(otel.Options{MeterProvider: mp, TracerProvider: tp})
//	client, err := leasehold.New(store, &leasehold.Options{
//		Observer: leasehold.Observers(obs, leasehold.SlogObserver(logger)),
//	})
//	table := fence.Table{Name: "accounts", OnStale: leasehold.FenceRejections(obs)}
//	...
//	client.Close()
//	obs.Close() // unregisters the lease age gauge's callback
//
// Make one Observer per MeterProvider and share it among the clients that
// report there: it tells their leases apart by key and token. Two on one
// provider report the lease age twice over, and the provider keeps one of
// the two values, not the older lease's. Close unregisters the age gauge's
// callback, for a provider that outlives the observer.
//
// The metrics (docs/metrics.md lists them with their Prometheus names):
//
//   - leasehold.acquires ({acquire}, counter): Acquire and Claim calls, by
//     leasehold.outcome: granted, held (the key stayed held by another
//     owner) or error.
//   - leasehold.acquire.duration (s, histogram): the time from each Acquire
//     or Claim call to its return (its wait on the lock and its store
//     calls), by leasehold.outcome.
//   - leasehold.acquire.contention ({attempt}, counter): store attempts of
//     an acquire that did not grant the key: every attempt of an acquire
//     answered held, all but the last of one that was granted or failed.
//     They are mostly attempts answered held; while waiting, an attempt
//     that failed and was retried counts too.
//   - leasehold.leases.held ({lease}, up-down counter): leases held now: +1
//     when Acquire grants one, -1 at its one EventLost or EventRelease. A
//     Claim's grant (no Lease) is not counted.
//   - leasehold.lease.duration (s, histogram): how long each lease was held,
//     from its grant's send time to its loss or release, by
//     leasehold.lease.end: released or lost.
//   - leasehold.lease.age (s, gauge): how long the oldest lease held now
//     has been held, from its grant's send time, read at each collection;
//     no point while none is held, one per key held with KeyAttribute. The
//     duration histogram has a lease only once it ended: this shows the
//     leases still held. A lease whose end reaches the observer before its
//     grant (the client reports them in order; a queue between might not)
//     is not counted: the early end (up to 1024 kept) cancels the grant.
//   - leasehold.renew.failures ({renewal}, counter): failed renewals, by
//     leasehold.outcome: jeopardy (not refused: retried until the deadline)
//     or lost (refused: the lease is lost).
//   - leasehold.lease.losses ({lease}, counter): leases lost, by
//     leasehold.loss.reason: expired (the holder's deadline passed),
//     not_held (the store refused a renewal or reported the grant gone) or
//     other. A Release that finds the grant gone (a *LostError) counts too.
//   - leasehold.store.duration (s, histogram): store calls, by
//     leasehold.operation (acquire, renew, release) and leasehold.outcome
//     (ok, held, not_held, error). An acquire is timed only when it made
//     exactly one store attempt, by its Wait: on a store that queues
//     waiters (etcd), a waiting acquire's one attempt includes its time in
//     the queue.
//   - leasehold.fence.rejections ({write}, counter): writes a fence helper
//     refused as stale (through leasehold.FenceRejections). Never by key,
//     even with KeyAttribute: the fenced resource is a row or a path.
//
// Without Options.KeyAttribute, New makes every counter's series at 0
// (each outcome and reason), so that a rate or an increase sees the first
// event. With it, every measurement but the fence rejections also
// carries leasehold.key. It is off by default: a key per job or per
// message would make a series per key.
//
// The spans are leasehold.acquire, leasehold.renew and leasehold.release,
// with the attributes leasehold.key and, for a grant, leasehold.token.
// Each is made when its event arrives: it starts at the event's time minus
// its duration (Wait for an acquire, Latency for a renewal or release) and
// ends then. An acquire's span is a child of the span in the context
// given to Acquire, Claim or Do, a release's of the span in the context
// given to Release (leasehold.Event.Context); a renewal's is a root linked
// to the span of Acquire's caller, since a lease can outlive that span by
// days and its renewals would pile up in its trace. A refusal because the
// key is held is an outcome (leasehold.outcome=held, the status unset);
// any other error sets the status to Error and records the error.
//
// The names follow the OpenTelemetry semantic conventions (a histogram of
// durations ends in .duration, in seconds; counts have annotation units),
// and become Prometheus names by the naming guide (_seconds, _total on
// counters).
package otel
