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
// call the client; count, or hand the event off. Event.Context carries the
// caller's context (its trace span, its values). Observers combines several.
//
// Order: a lease's EventAcquire is reported before anything can end the
// lease, so its EventRenew, EventLost and EventRelease always come after
// it (an observer may pair them by key and token). Nothing else is
// ordered: the events of different leases, and of different clients
// sharing an observer, arrive from different goroutines in any order, and
// may arrive concurrently.
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
	// attempts made; for a grant, Held is the time since the granting
	// attempt was sent (the lease's age, as EventLost and EventRelease
	// measure it). Context is the caller's. Claimed is set when the call was Claim: the grant
	// has no Lease, so no EventLost or EventRelease follows it. Every other
	// grant (a Lease) ends with exactly one EventLost or EventRelease,
	// reported after its EventAcquire: the grant is reported before the
	// lease is visible to Close, renewal or the deadline. An Acquire that
	// Close overtakes while it reports the grant returns ErrClosed; its
	// grant, already reported, then ends with an EventRelease.
	EventAcquire EventKind = iota + 1
	// EventRenew: a renewal's answer. Err is nil when the lease was
	// extended; otherwise the renewal failed, and either the lease is lost
	// (ErrNotHeld: an EventLost follows) or it is in jeopardy with
	// Remaining left before its deadline, and is retried. Latency is the
	// store call's time. Context is the lease's (Lease.Context: the values
	// of the context its Acquire was given).
	EventRenew
	// EventLost: the lease ended without Release. Err is the *LostError
	// (its Reason: ErrNotHeld, ErrExpired, ...). Held is the time since
	// the grant was sent. It is reported before the lease's context is
	// cancelled. Context is the lease's.
	EventLost
	// EventRelease: Release deleted the grant from the store, or tried.
	// Err is the store's answer (nil, or the *LostError of a lease already
	// lost). Held is the time since the grant was sent; Latency the store
	// call's time. Context is the one given to Release (or Do's).
	EventRelease
	// EventFenceReject: a fence helper refused a write whose token was
	// stale (see FenceRejections). Key is the fenced resource (a resource
	// name, or table and id), Token the refused token, Err the
	// *fence.StaleError. It comes from the resource's side, not from a
	// client's lease. Context is the one the fence helper was given (the
	// refused request's).
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
//
// Context is the context of the call the event reports (never nil), so
// that an observer can relate the event to its caller: a tracing observer
// makes its span a child of the caller's, a logging one passes it to its
// handler. Use its values only: it may be cancelled already, and it must
// not be kept past Observe. (It is a field rather than an argument of
// Observe so that every Observer written before it, and every
// ObserverFunc, still compiles and forwards it.)
type Event struct {
	Context   context.Context
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

// acquired is what observeAcquire reports of an acquire: the token
// granted, when the call was made and its granting attempt sent, the
// store attempts, and whether it was a Claim.
type acquired struct {
	token        uint64
	called, sent time.Time
	attempts     int
	claimed      bool
}

// observeAcquire reports an acquire that the caller made with ctx and that
// returned err to the observer.
func (c *Client) observeAcquire(ctx context.Context, key string, a acquired, err error) {
	if c.opts.Observer == nil {
		return
	}
	now := c.opts.Clock.Now()
	e := Event{Context: ctx, Kind: EventAcquire, Key: key, Wait: now.Sub(a.called), Attempts: a.attempts, Claimed: a.claimed, Err: err}
	if err == nil {
		e.Token, e.Held = a.token, now.Sub(a.sent)
	}
	c.opts.Observer.Observe(e)
}

// FenceRejections returns a fence.StaleFunc that reports each refused write
// to o as an EventFenceReject, so that the fence helpers' rejections reach
// the same metrics and logs as the leases:
//
//	table := fence.Table{Name: "accounts", OnStale: leasehold.FenceRejections(obs)}
func FenceRejections(o Observer) fence.StaleFunc {
	return func(ctx context.Context, err *fence.StaleError) {
		if ctx == nil {
			ctx = context.Background()
		}
		o.Observe(Event{Context: ctx, Kind: EventFenceReject, Key: err.Resource, Token: err.Token, Err: err})
	}
}

// Observers returns an Observer that gives each event to every one of obs,
// in order: the way to combine, say, the otel module's observer and
// SlogObserver. Nil entries (nil interface values: an optional observer
// left unset) are skipped, and entries that are themselves
// made by Observers are flattened. It returns nil when no observer is
// left (Options.Observer nil: none), and the observer itself when one is.
// The rules of Observer hold for the whole: each of obs must return
// quickly.
func Observers(obs ...Observer) Observer {
	var all []Observer
	for _, o := range obs {
		switch o := o.(type) {
		case nil:
		case *fanOut:
			all = append(all, o.obs...)
		default:
			all = append(all, o)
		}
	}
	switch len(all) {
	case 0:
		return nil
	case 1:
		return all[0]
	}
	return &fanOut{all}
}

// fanOut is the Observer Observers makes of two or more observers (a
// pointer, so that it compares like any other observer).
type fanOut struct{ obs []Observer }

// Observe gives e to each observer in turn.
func (f *fanOut) Observe(e Event) {
	for _, o := range f.obs {
		o.Observe(e)
	}
}
