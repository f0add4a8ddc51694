package leasehold

//go:generate go run ./internal/wrapgen

// WrapStore returns a store that serves every call through outer and offers
// exactly the optional capabilities inner has, so a client behaves over it
// as it would over inner. It is how to write store middleware (counting,
// recording, tracing, injecting faults) without losing a capability the
// client or another package finds by type assertion ([Notifier],
// [Watcher], [Waiter], [BatchRenewer], [LostExplainer], [Lister]): a
// wrapper that embeds a Store keeps only the Store methods, and a store
// that hid its Waiter or its Watcher would make its clients poll.
//
// outer is the middleware: a Store whose methods usually call inner's. The
// result's Store methods (Close too) are outer's. For each optional
// capability, the result implements it if and only if inner does; its
// calls go to outer when outer implements that capability too, and straight
// to inner otherwise. A capability outer implements but inner lacks is not
// offered. So a middleware implements the capabilities it wants to see
// (calling inner's through a type assertion, which holds whenever the
// method is called) and lets the others through untouched.
//
// Both stores must be non-nil. The wrapper adds one interface call to each
// method.
func WrapStore(inner, outer Store) Store {
	m := capabilitiesOf(inner)
	var p storeParts
	p.fill(m, outer, inner)
	return wrappers[m](p)
}

// capSet is a set of optional capabilities, one bit each (wrap_gen.go).
type capSet uint

// pick returns outer as a T if it is one, else inner, which must be.
func pick[T any](outer, inner Store) T {
	if v, ok := outer.(T); ok {
		return v
	}
	return inner.(T)
}
