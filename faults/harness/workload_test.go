package harness

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

// TestDefaultWorkAndGap checks that the work step and the gap between
// holds follow the TTL up to their caps, so that a 15 s TTL (azblob) does
// not mean 3 s between an operation's read and its write.
func TestDefaultWorkAndGap(t *testing.T) {
	for _, tc := range []struct {
		ttl, work, gap time.Duration
	}{
		{750 * time.Millisecond, 150 * time.Millisecond, 187500 * time.Microsecond},
		{time.Second, 200 * time.Millisecond, 250 * time.Millisecond},
		{15 * time.Second, MaxWork, MaxGap},
	} {
		if w, g := DefaultWork(tc.ttl), DefaultGap(tc.ttl); w != tc.work || g != tc.gap {
			t.Errorf("TTL %s: work %s, gap %s; want %s, %s", tc.ttl, w, g, tc.work, tc.gap)
		}
	}
}

// TestHolderArgsRoundTrip checks that a holder reads back the workload the
// harness gives it, and that a holder given no -gap keeps the old TTL/4.
func TestHolderArgsRoundTrip(t *testing.T) {
	c := HolderConfig{ID: "h0.1", URL: "sqlite:///x", Resource: "http://127.0.0.1:1", Keys: KeyNames(8),
		TTL: time.Second, Work: 100 * time.Millisecond, Gap: 250 * time.Millisecond, OpsMin: 4, OpsMax: 12,
		Rate: 1, History: "/tmp/h.jsonl", Seed: 7}
	got, err := ParseHolderArgs(c.Args())
	if err != nil || !reflect.DeepEqual(got, c) {
		t.Fatalf("ParseHolderArgs(Args()) = %+v, %v; want %+v", got, err, c)
	}
	if k := got.Keys; len(k) != 8 || k[0] != "k0" || k[7] != "k7" {
		t.Errorf("KeyNames(8) = %v", k)
	}
	args := c.Args()
	for i := 0; i < len(args); i += 2 {
		if args[i] == "-gap" {
			args = append(args[:i:i], args[i+2:]...)
			break
		}
	}
	if got, err := ParseHolderArgs(args); err != nil || got.Gap != c.TTL/4 {
		t.Errorf("without -gap: gap %s, %v; want TTL/4", got.Gap, err)
	}
	c.Gap = -time.Second
	if _, err := ParseHolderArgs(c.Args()); err == nil {
		t.Error("a negative -gap was accepted")
	}
}

// TestRunConfigWorkload checks the defaults and the refusals of the
// workload fields.
func TestRunConfigWorkload(t *testing.T) {
	base := RunConfig{Backend: &SQLite{}, Open: func(ctx context.Context, u string) (leasehold.Store, error) { return nil, nil },
		HolderCmd: []string{"x"}, Dir: "d"}
	cfg, err := base.withDefaults()
	if err != nil || cfg.Holders != 3 || len(cfg.Keys) != 2 || cfg.OpsMin != 2 || cfg.OpsMax != 6 {
		t.Fatalf("defaults: %+v, %v", cfg, err)
	}
	for _, bad := range []func(*RunConfig){
		func(c *RunConfig) { c.OpsMin, c.OpsMax = 5, 4 },
		func(c *RunConfig) { c.OpsMin, c.OpsMax = 0, 4 },
		func(c *RunConfig) { c.Work = -1 },
		func(c *RunConfig) { c.Gap = -1 },
		func(c *RunConfig) { c.Holders = -1 },
	} {
		c := base
		bad(&c)
		if _, err := c.withDefaults(); err == nil {
			t.Errorf("accepted %+v", c)
		}
	}
}

// TestOpTimeoutOutlastsLongPause checks that a holder's request to the
// resource outlives the longest F2 pause of every backend (the takeover
// bound + 1.5 x TTL, at the 1 s TTL of the suite's stores and azblob's
// 15 s): the harness pauses a holder just after the resource answered its
// read, and a timer that runs out during the pause fails that read on the
// wake, so the operation the pause is aimed at never makes its stale write
// (with the old 5 s, Consul's 22 s pause and azblob's 42 s did that).
func TestOpTimeoutOutlastsLongPause(t *testing.T) {
	for _, name := range BackendNames() {
		b, err := NewBackend(name)
		if err != nil {
			t.Fatal(err)
		}
		ttl, bound := time.Second, 1+1.0/3
		if name == "azblob" {
			ttl = 15 * time.Second
		}
		if tb, ok := b.(TakeoverBounder); ok {
			bound = tb.TakeoverBound(ttl)
		}
		pause := time.Duration((bound + 1.5) * float64(ttl))
		if opTimeout < pause+10*time.Second {
			t.Errorf("%s: the longest F2 pause is %s; a request's timeout of %s does not outlast it by 10 s", name, pause, opTimeout)
		}
	}
}

// TestProbeTimeoutCoversEveryKey checks that the final probe's deadline
// leaves every key its whole wait: with Consul's takeover bound (21.2 x a
// 1 s TTL) and the long mode's 8 keys, the first key can take the whole
// wait and each later one must still get its own.
func TestProbeTimeoutCoversEveryKey(t *testing.T) {
	ttl := time.Second
	wait := time.Duration(new(Consul).TakeoverBound(ttl)*float64(ttl)) + ttl + time.Second
	for _, n := range []int{1, 2, 8, 16} {
		if got := probeTimeout(wait, n); got < time.Duration(n)*wait+10*time.Second {
			t.Errorf("%d keys, %s each: the probe's deadline %s does not cover them", n, wait, got)
		}
	}
}
