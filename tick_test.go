package leasehold_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

func TestTickKey(t *testing.T) {
	tokyo := time.FixedZone("JST", 9*3600)
	kolkata := time.FixedZone("IST", 5*3600+1800)
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		ny = time.FixedZone("EST", -5*3600) // no tzdata: the offset alone
	}
	at := func(h, m, s, ns int, loc *time.Location) time.Time {
		return time.Date(2026, 11, 27, h, m, s, ns, loc)
	}
	for _, tc := range []struct {
		name   string
		t      time.Time
		period time.Duration
		want   string
	}{
		{"on_the_tick", at(15, 0, 0, 0, time.UTC), time.Minute, "job/2026-11-27T15:00:00Z"},
		{"just_after", at(15, 0, 0, 400_000_000, time.UTC), time.Minute, "job/2026-11-27T15:00:00Z"},
		{"just_before_is_the_next_tick", at(14, 59, 59, 700_000_000, time.UTC), time.Minute, "job/2026-11-27T15:00:00Z"},
		{"half_way_rounds_up", at(15, 0, 30, 0, time.UTC), time.Minute, "job/2026-11-27T15:01:00Z"},
		{"under_half_way_rounds_down", at(15, 0, 29, 999_999_999, time.UTC), time.Minute, "job/2026-11-27T15:00:00Z"},
		{"tokyo_same_instant", at(24, 0, 0, 200, tokyo), time.Minute, "job/2026-11-27T15:00:00Z"},
		{"kolkata_half_hour_zone", at(20, 30, 0, 0, kolkata), time.Hour, "job/2026-11-27T15:00:00Z"},
		{"new_york", at(15, 0, 0, 0, time.UTC).In(ny), 5 * time.Minute, "job/2026-11-27T15:00:00Z"},
		{"day_ticks_at_utc_midnight", at(10, 0, 0, 0, tokyo), 24 * time.Hour, "job/2026-11-27T00:00:00Z"},
		{"second_ticks", at(15, 0, 1, 499_000_000, time.UTC), time.Second, "job/2026-11-27T15:00:01Z"},
		{"sub_second_period", at(15, 0, 0, 260_000_000, time.UTC), 250 * time.Millisecond, "job/2026-11-27T15:00:00.25Z"},
		{"no_period_keys_the_instant", at(15, 0, 0, 1, time.UTC), 0, "job/2026-11-27T15:00:00.000000001Z"},
		{"negative_period_keys_the_instant", at(15, 0, 0, 0, time.UTC), -time.Second, "job/2026-11-27T15:00:00Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := leasehold.TickKey("job", tc.t, tc.period)
			if got != tc.want {
				t.Errorf("TickKey(%v, %s) = %q, want %q", tc.t, tc.period, got, tc.want)
			}
			if err := leasehold.ValidateKey(got); err != nil {
				t.Errorf("key %q is not a valid key: %v", got, err)
			}
		})
	}
}

// Nodes whose clocks disagree by less than half a period agree on the
// tick's key.
func TestTickKeySkew(t *testing.T) {
	tick := time.Date(2026, 11, 27, 15, 0, 0, 0, time.UTC)
	const period = 10 * time.Second
	want := leasehold.TickKey("job", tick, period)
	for skew := -period/2 + time.Millisecond; skew < period/2; skew += 97 * time.Millisecond {
		if got := leasehold.TickKey("job", tick.Add(skew), period); got != want {
			t.Fatalf("skew %s: key %q, want %q", skew, got, want)
		}
	}
	if leasehold.TickKey("job", tick.Add(period), period) == want {
		t.Fatal("the next tick has the same key")
	}
}

// A job scheduled every minute on every node runs once per minute: each
// node keys its run by the tick and holds the key for most of a period,
// even when the job is quick.
func ExampleTickKey() {
	tick := time.Date(2026, 11, 27, 15, 4, 0, 0, time.UTC)
	nodeA := tick.Add(-120 * time.Millisecond) // a little early
	nodeB := tick.Add(80 * time.Millisecond).In(time.FixedZone("JST", 9*3600))
	fmt.Println(leasehold.TickKey("jobs/report", nodeA, time.Minute))
	fmt.Println(leasehold.TickKey("jobs/report", nodeB, time.Minute))
	// Each node then runs:
	//	c.Do(ctx, key, leasehold.AcquireOptions{MinHold: 50 * time.Second}, job)
	// Output:
	// jobs/report/2026-11-27T15:04:00Z
	// jobs/report/2026-11-27T15:04:00Z
}
