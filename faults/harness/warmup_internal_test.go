package harness

import (
	"testing"
	"time"
)

func TestWarmUpLimit(t *testing.T) {
	for _, c := range []struct {
		ttl  time.Duration
		keys int
		want time.Duration
	}{
		{time.Second, 2, 32 * time.Second},
		{time.Second, 32, 62 * time.Second},
		{750 * time.Millisecond, 8, 33500 * time.Millisecond},
	} {
		if got := warmUpLimit(c.ttl, c.keys); got != c.want {
			t.Errorf("warmUpLimit(%s, %d) = %s, want %s", c.ttl, c.keys, got, c.want)
		}
	}
}
