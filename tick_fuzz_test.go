package leasehold_test

import (
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

// FuzzTickKey checks, for any instant, zone and period: the key is base,
// a slash and an RFC 3339 time that parses back to the tick nearest t, in
// UTC, a whole number of periods from the zero time and less than half a
// period from t; the same instant in another zone has the same key.
func FuzzTickKey(f *testing.F) {
	f.Add(int64(1795791600), int64(0), int64(time.Minute), 9*3600)
	f.Add(int64(1795791599), int64(999_999_999), int64(time.Second), -5*3600)
	f.Add(int64(-62135596800), int64(0), int64(24*time.Hour), 0)
	f.Add(int64(253402300799), int64(0), int64(time.Hour), 14*3600)
	f.Add(int64(1795791630), int64(0), int64(time.Minute), 5*3600+1800)
	f.Fuzz(func(t *testing.T, sec, nsec, period int64, offset int) {
		// Instants from year 1 to 9999, where RFC 3339 holds them.
		if sec < -62135596800 || sec > 253402300799-86400 || offset < -86399 || offset > 86399 {
			return
		}
		p := time.Duration(period)
		if p <= 0 || p > leasehold.MaxTTL {
			return
		}
		tt := time.Unix(sec, nsec%1e9).UTC()
		key := leasehold.TickKey("job", tt, p)
		stamp, ok := strings.CutPrefix(key, "job/")
		if !ok {
			t.Fatalf("key %q does not start with the base", key)
		}
		tick, err := time.Parse(time.RFC3339Nano, stamp)
		if err != nil {
			t.Fatalf("key %q: its time does not parse: %v", key, err)
		}
		if !tick.Equal(tt.Round(p)) || tick.Location() != time.UTC {
			t.Fatalf("key %q for %v, period %s: want the tick %v", key, tt, p, tt.Round(p))
		}
		if d := tick.Sub(tt); d > p/2 || d < -p/2 {
			t.Fatalf("tick %v is %s from %v, more than half of period %s", tick, d, tt, p)
		}
		if other := leasehold.TickKey("job", tt.In(time.FixedZone("z", offset)), p); other != key {
			t.Fatalf("the same instant in zone %+d keys %q, not %q", offset, other, key)
		}
	})
}
