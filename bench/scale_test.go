package bench

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/memory"
)

func TestScale(t *testing.T) {
	st := memory.New(nil)
	rs, err := Scale(context.Background(), st, ScaleOptions{
		Held: []int{500, 1, 50, 50}, Probes: 20, Memory: HeapMemory(), Prefix: "t/scale/",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 {
		t.Fatalf("%d results, want one per distinct count: %+v", len(rs), rs)
	}
	for i, want := range []int{1, 50, 500} {
		r := rs[i]
		if r.Held != want || r.Store != "memory" || r.Errors != 0 || r.Partial {
			t.Errorf("result %d: %+v, want %d held, no errors", i, r, want)
		}
		if r.Acquire.N != 20 || r.Release.N != 20 || r.CyclesPerSec <= 0 || r.FillPerSec <= 0 {
			t.Errorf("result %d: %d acquires, %d releases timed, %v cycles/s, %v fills/s", i, r.Acquire.N, r.Release.N, r.CyclesPerSec, r.FillPerSec)
		}
		if r.MemBytes <= 0 {
			t.Errorf("result %d: memory %d, want measured", i, r.MemBytes)
		}
	}
	if keys := leftover(t, st, "t/scale/"); len(keys) > 0 {
		t.Errorf("%d leases left held, e.g. %s", len(keys), keys[0])
	}
}

func TestScaleWithoutMemory(t *testing.T) {
	rs, err := Scale(context.Background(), memory.New(nil), ScaleOptions{Held: []int{3}, Probes: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].MemBytes != -1 || rs[0].MemPerLease != 0 {
		t.Errorf("%+v: want memory not measured (-1)", rs)
	}
}

func TestScaleInterrupted(t *testing.T) {
	st := memory.New(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rs, err := Scale(ctx, st, ScaleOptions{
		Held: []int{10, 1 << 30}, Probes: 5, Prefix: "t/scale-int/", Fillers: 2,
		ProgressEvery: 10 * time.Millisecond,
		Progress: func(p Progress) {
			if p.Phase == "fill" && p.Done > 100 {
				cancel()
			}
		},
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if len(rs) == 0 || !rs[len(rs)-1].Partial {
		t.Errorf("results %+v: want the last one partial", rs)
	}
	if keys := leftover(t, st, "t/scale-int/"); len(keys) > 0 {
		t.Errorf("%d leases left held after the interrupt", len(keys))
	}
}

func TestScaleStopsAtAFailedFill(t *testing.T) {
	rs, err := Scale(context.Background(), failing{memory.New(nil)}, ScaleOptions{Held: []int{1, 10}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Errors == 0 || rs[0].FirstError == "" {
		t.Errorf("%+v: want one result with the fill's error", rs)
	}
}

func TestScaleBadOptions(t *testing.T) {
	if _, err := Scale(context.Background(), memory.New(nil), ScaleOptions{Held: []int{-5, 1}}); err == nil {
		t.Error("a negative held count was accepted")
	}
}

func TestHerd(t *testing.T) {
	st := memory.New(nil)
	r, err := Herd(context.Background(), st, HerdOptions{Waiters: 3, Releases: 6, Hold: 2 * time.Millisecond, Prefix: "t/herd/"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Store != "memory" || r.Waiters != 3 || r.Errors != 0 || r.Partial {
		t.Errorf("%+v", r)
	}
	if r.Releases < 6 || r.Handoff.N != int(r.Releases) || r.Attempts < r.Releases || r.WakeupsPerRelease < 1 {
		t.Errorf("releases %d, hand-offs timed %d, attempts %d, per release %v", r.Releases, r.Handoff.N, r.Attempts, r.WakeupsPerRelease)
	}
	if keys := leftover(t, st, "t/herd/"); len(keys) > 0 {
		t.Errorf("leases left held: %v", keys)
	}
}

func TestHerdInterrupted(t *testing.T) {
	st := memory.New(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := Herd(ctx, st, HerdOptions{Waiters: 4, Releases: 1 << 30, Hold: time.Millisecond, Prefix: "t/herd-int/",
		ProgressEvery: 10 * time.Millisecond, Progress: func(Progress) { cancel() }})
	if !errors.Is(err, context.Canceled) || !r.Partial {
		t.Fatalf("err = %v, partial %v: want context.Canceled, partial", err, r.Partial)
	}
	if keys := leftover(t, st, "t/herd-int/"); len(keys) > 0 {
		t.Errorf("leases left held after the interrupt: %v", keys)
	}
}

func TestProcessMemory(t *testing.T) {
	n, err := ProcessMemory(0)(context.Background())
	if err != nil || n <= 0 {
		t.Errorf("ProcessMemory(self) = %d, %v", n, err)
	}
	if _, err := ProcessMemory(1 << 30)(context.Background()); err == nil {
		t.Error("a process that does not exist was measured")
	}
	if _, err := ProcessMemory()(context.Background()); err == nil {
		t.Error("no process was measured")
	}
}

func TestParsePPID(t *testing.T) {
	for _, tc := range []struct {
		stat string
		want int
		ok   bool
	}{
		{"123 (redis-server) S 45 123 123 0", 45, true},
		{"7 (a) b (c)) R 9 7 7", 9, true},
		{"8 (with space) S 1 8", 1, true},
		{"garbage", 0, false},
		{"9 (x) S", 0, false},
	} {
		got, ok := parsePPID(tc.stat)
		if ok != tc.ok || got != tc.want {
			t.Errorf("parsePPID(%q) = %d, %v; want %d, %v", tc.stat, got, ok, tc.want, tc.ok)
		}
	}
}
