package leasehold

import (
	"context"
	"time"

	"github.com/leasehold-go/leasehold/fence"
)

// Observer receives what happens to a client's leases, for metrics, traces
// and logs (the slog adapter in this package, the otel module). Observe is
// called synchronously on the client's goroutines, some of them with the
// client's lock held: it must return quickly, must not block, and must not
// call the client; count, or hand the event off.
type Observer interface {
	Observe(Event)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(Event)

// Observe calls f(e).
func (f ObserverFunc) Observe(e Event) { f(e) }

// EventKind says what an Event reports.
type EventKind uint8

// The events. Each names the Event fields it sets besides Kind, Key and
// Token (0 when no grant was made).
const (
	// EventAcquire: an Acquire (or Claim) returned. Err is nil when it
	// was granted, else why not (a *HeldError when the key stayed held).
	// Wait is the time from the call to its return, Attempts the store
	// attempts made. Claimed is set when the call was Claim: the grant
	// has no Lease, so no EventLost or EventRelease follows it. Every other
	// grant (a Lease) ends with exactly one EventLost or EventRelease.
	EventAcquire EventKind = iota + 1
	// EventRenew: a renewal's answer. Err is nil when the lease was
	// extended; otherwise the renewal failed, and either the lease is lost
	// (ErrNotHeld: an EventLost follows) or it is in jeopardy with
	// Remaining left before its deadline, and is retried. Latency is the
	// store call's time.
	EventRenew
	// EventLost: the lease ended without Release. Err is the *LostError
	// (its Reason: ErrNotHeld, ErrExpired, ...). Held is the time since
	// the grant was sent. It is reported before the lease's context is
	// cancelled.
	EventLost
	// EventRelease: Release deleted the grant from the store, or tried.
	// Err is the store's answer (nil, or the *LostError of a lease already
	// lost). Held is the time since the grant was sent; Latency the store
	// call's time.
	EventRelease
	// EventFenceReject: a fence helper refused a write whose token was
	// stale (see FenceRejections). Key is the fenced resource (a resource
	// name, or table and id), Token the refused token, Err the
	// *fence.StaleError. It comes from the resource's side, not from a
	// client's lease.
	EventFenceReject
)

// String returns the kind's name: acquire, renew, lost, release or
// fence_reject.
func (k EventKind) String() string {
	switch k {
	case EventAcquire:
		return "acquire"
	case EventRenew:
		return "renew"
	case EventLost:
		return "lost"
	case EventRelease:
		return "release"
	case EventFenceReject:
		return "fence_reject"
	}
	return "unknown"
}

// Event is one thing that happened to a lease; see EventKind for which
// fields each kind sets.
type Event struct {
	Kind      EventKind
	Key       string
	Token     uint64
	Err       error
	Wait      time.Duration
	Attempts  int
	Latency   time.Duration
	Held      time.Duration
	Remaining time.Duration
	Claimed   bool
}

// FenceRejections returns a fence.StaleFunc that reports each refused write
// to o as an EventFenceReject, so that the fence helpers' rejections reach
// the same metrics and logs as the leases:
//
//	table := fence.Table{Name: "accounts", OnStale: leasehold.FenceRejections(obs)}
func FenceRejections(o Observer) fence.StaleFunc {
	return func(_ context.Context, err *fence.StaleError) {
		o.Observe(Event{Kind: EventFenceReject, Key: err.Resource, Token: err.Token, Err: err})
	}
}
