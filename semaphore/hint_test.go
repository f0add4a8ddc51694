package semaphore

import (
	"strconv"
	"testing"
)

// The hints stay bounded however many keys a Semaphore is used on, and the
// key remembered last is always kept.
func TestHintsBounded(t *testing.T) {
	for _, keys := range []int{1, maxHints, maxHints + 1, 10 * maxHints} {
		s := &Semaphore{n: 10, hints: map[string]int{}}
		for i := range keys {
			k := "k" + strconv.Itoa(i)
			s.remember(k, i%10)
			if got, ok := s.hint(k); !ok || got != i%10 {
				t.Fatalf("%d keys: hint(%q) = %d, %v right after remembering slot %d", keys, k, got, ok, i%10)
			}
			if len(s.hints) > maxHints {
				t.Fatalf("%d keys: %d hints kept, more than %d", keys, len(s.hints), maxHints)
			}
		}
		s.remember("k0", 3) // a key remembered again keeps one entry
		if got, _ := s.hint("k0"); got != 3 || len(s.hints) > maxHints {
			t.Fatalf("%d keys: k0 re-remembered: hint %d, %d entries", keys, got, len(s.hints))
		}
	}
}
