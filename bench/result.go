package bench

import (
	"fmt"
	"time"
)

// Result is what Run measured on one store with one number of clients.
type Result struct {
	Store   string  // Options.Name
	Clients int     // concurrent clients
	Keys    KeyMode // distinct or hot

	// Elapsed is the time the clients cycled, from the start signal to
	// the end of the last cycle.
	Elapsed time.Duration
	// Cycles counts acquire+release cycles that both succeeded.
	Cycles int64
	// Acquire is the latency of Client.Acquire; in Hot mode it includes
	// the wait for the key.
	Acquire Summary
	// Release is the latency of Lease.Release.
	Release Summary
	// Errors counts failed acquires and releases (a key held by another
	// client is not an error). FirstError is the first one's text.
	Errors     int64
	FirstError string
	// Refused counts store acquire attempts answered "held" (Hot mode:
	// the retries of waiting clients).
	Refused int64

	// Renewals counts the renewals of the leases held while the clients
	// cycled; RenewalsPerSec is their rate and Renew their latency.
	Renewals       int64
	RenewalsPerSec float64
	Renew          Summary
	// Holders is the number of leases held while cycling; HoldsLost the
	// number of them lost before the run released them.
	Holders   int
	HoldsLost int

	// Handoff is the time from a holder's Release call to a waiting
	// client's Acquire returning the key.
	Handoff Summary

	// Partial reports that the run was interrupted: the figures cover the
	// part that ran.
	Partial bool
}

// CyclesPerSec is Cycles over Elapsed.
func (r Result) CyclesPerSec() float64 { return perSec(r.Cycles, r.Elapsed) }

// ScaleResult is what Scale measured with Held leases held on a store.
type ScaleResult struct {
	Store string
	Held  int // leases held while probing
	// FillPerSec is the rate at which the held leases were acquired (by
	// Fillers concurrent acquirers).
	FillPerSec float64
	// Acquire and Release are the latencies of one client's cycles on a
	// fresh key while Held leases are held; CyclesPerSec their rate.
	Acquire      Summary
	Release      Summary
	CyclesPerSec float64
	// MemBytes is the memory the probe reported after the fill, -1 when
	// not measured; MemPerLease is (MemBytes - the probe's figure before
	// any lease was held) / Held, 0 when not measured.
	MemBytes    int64
	MemPerLease float64
	// Errors counts failed acquires and releases; FirstError is the
	// first one's text.
	Errors     int64
	FirstError string
	Partial    bool
}

// HerdResult is what Herd measured with Waiters clients waiting on one key.
type HerdResult struct {
	Store   string
	Waiters int
	// Releases counts the hand-offs measured: a release followed by
	// another client's acquire.
	Releases int64
	// Attempts counts the store acquire attempts all clients made over
	// those hand-offs; WakeupsPerRelease is Attempts / Releases: about 1
	// when the store queues waiters, about Waiters when every release
	// wakes every waiter, and more when waiters poll.
	Attempts          int64
	WakeupsPerRelease float64
	// Handoff is the time from a Release call to the next client's
	// Acquire returning.
	Handoff    Summary
	Elapsed    time.Duration
	Errors     int64
	FirstError string
	Partial    bool
}

// Reference is a figure not measured by this package, shown next to the
// measured ones: a figure quoted in the field, a store's raw protocol floor,
// or a peer library measured by its own benchmark.
type Reference struct {
	Store string // what it is, e.g. "Redis SET NX"
	Kind  string // "quoted", "floor" or "peer"
	// Clients is the concurrency the figure was taken at, 0 if unknown.
	Clients int
	// AcquireLow and AcquireHigh bound the acquire latency (equal when
	// one figure is known, both 0 when none is).
	AcquireLow, AcquireHigh time.Duration
	// CyclesPerSec is the throughput, 0 if unknown.
	CyclesPerSec float64
	// Source says where the figure comes from (a URL, a benchmark name).
	Source string
}

// Report gathers results of every kind, as ReadJSON returns them and
// WriteTable and WriteSVG draw them.
type Report struct {
	Cycles     []Result
	Scale      []ScaleResult
	Herd       []HerdResult
	References []Reference
}

// Failure names a result that counted errors.
type Failure struct {
	// What says which measurement it was, for example "redis with 8
	// clients", "redis with 1000 leases held" or "redis with 8 waiters".
	What string
	// Errors and First are the result's Errors and FirstError.
	Errors int64
	First  string
}

// Failures returns a Failure for each result of r that counted errors:
// the cycles results first, then the scale and the herd results.
func (r Report) Failures() []Failure {
	var out []Failure
	note := func(what string, n int64, first string) {
		if n > 0 {
			out = append(out, Failure{What: what, Errors: n, First: first})
		}
	}
	for _, x := range r.Cycles {
		note(fmt.Sprintf("%s with %d clients", x.Store, x.Clients), x.Errors, x.FirstError)
	}
	for _, x := range r.Scale {
		note(fmt.Sprintf("%s with %d leases held", x.Store, x.Held), x.Errors, x.FirstError)
	}
	for _, x := range r.Herd {
		note(fmt.Sprintf("%s with %d waiters", x.Store, x.Waiters), x.Errors, x.FirstError)
	}
	return out
}
