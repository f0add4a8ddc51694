package leasetest

import (
	"fmt"
	"strings"
	"testing"
)

// maxAttempts is how many times a timing-dependent check runs before its
// inconclusive outcomes add up to a failure.
const maxAttempts = 3

// attempts runs a check whose outcome depends on the machine keeping time
// (a renewal sent every TTL/3 must be answered before the TTL runs out).
// The check calls t.Fatal for a real violation, and returns a non-empty
// reason when its premise did not hold: the holder's own time ran out
// before the store could have failed it (the machine or the store stalled
// for longer than the TTL allows), so a lost lease proves nothing about
// the store. Such an attempt is logged and tried again with fresh keys;
// maxAttempts inconclusive attempts in a row fail the test, so a store too
// slow for its TTL is reported, never skipped.
func (s *suite) attempts(t *testing.T, check func(t *testing.T) (inconclusive string)) {
	t.Helper()
	retryInconclusive(t, check, fmt.Sprintf("inconclusive %d times in a row (the store or the machine is too slow for a %s TTL; set Config.ShortTTL)",
		maxAttempts, s.ttl))
}

// retryInconclusive runs check up to maxAttempts times until it is
// conclusive, logging each inconclusive attempt, and fails t with verdict
// and the reasons when none was.
func retryInconclusive(t *testing.T, check func(t *testing.T) (inconclusive string), verdict string) {
	t.Helper()
	var reasons []string
	for i := 0; i < maxAttempts; i++ {
		why := check(t)
		if why == "" {
			return
		}
		t.Logf("attempt %d inconclusive: %s", i+1, why)
		reasons = append(reasons, why)
	}
	t.Fatalf("%s: %s", verdict, strings.Join(reasons, "; "))
}
