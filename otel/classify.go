package otel

import (
	"errors"

	"github.com/leasehold-go/leasehold"
)

// acquireOutcome names an acquire's result: granted, held or error.
func acquireOutcome(err error) string {
	switch {
	case err == nil:
		return "granted"
	case errors.Is(err, leasehold.ErrHeld):
		return "held"
	}
	return "error"
}

// storeOutcome names a store call's answer: ok, held, not_held or error.
func storeOutcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, leasehold.ErrHeld):
		return "held"
	case errors.Is(err, leasehold.ErrNotHeld):
		return "not_held"
	}
	return "error"
}

// lossReason names the Reason of a *LostError: expired, not_held or other.
func lossReason(err error) string {
	var lost *leasehold.LostError
	if !errors.As(err, &lost) {
		return "other"
	}
	switch {
	case errors.Is(lost.Reason, leasehold.ErrExpired):
		return "expired"
	case errors.Is(lost.Reason, leasehold.ErrNotHeld):
		return "not_held"
	}
	return "other"
}

// contention is the number of an acquire's store attempts that did not
// grant the key: all of them when it ended held, all but the last
// otherwise (the last granted it, or failed in a way that ended the
// acquire).
func contention(attempts int, outcome string) int {
	if outcome == "held" {
		return attempts
	}
	return max(attempts-1, 0)
}
