package bench

import (
	"testing"
	"time"
)

func TestProgressString(t *testing.T) {
	for _, tc := range []struct {
		p    Progress
		want string
	}{
		{Progress{Store: "redis", Clients: 8, Phase: "cycles", Elapsed: 2049 * time.Millisecond, Total: 10 * time.Second, Done: 12345, Errors: 3},
			"redis, 8 clients: 2s of 10s, 12,345 cycles, 3 errors"},
		{Progress{Store: "redis", Clients: 2, Phase: "handoff", Done: 2, Target: 10},
			"redis, 2 clients: hand-off 2 of 10"},
		{Progress{Store: "memory", Phase: "fill", Elapsed: 1500 * time.Millisecond, Done: 5000, Target: 100000},
			"memory: acquiring leases to hold: 5,000 of 100,000 (1.5s)"},
		{Progress{Store: "memory", Clients: 100000, Phase: "probe", Errors: 2},
			"memory: timing cycles with 100,000 leases held, 2 errors"},
		{Progress{Store: "memory", Phase: "release", Done: 1000, Target: 1000},
			"memory: releasing held leases: 1,000 of 1,000"},
		{Progress{Store: "etcd", Clients: 64, Phase: "herd", Elapsed: 300 * time.Millisecond, Done: 4, Target: 20},
			"etcd, 64 waiters: 4 of 20 hand-offs (300ms)"},
		{Progress{Store: "etcd", Phase: "warm-up", Elapsed: time.Second}, "etcd: warm-up 1s"},
	} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.p, got, tc.want)
		}
	}
}

func TestFmtInt(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := fmtInt(n); got != want {
			t.Errorf("fmtInt(%d) = %q, want %q", n, got, want)
		}
	}
}
