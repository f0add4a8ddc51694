package core

import (
	"slices"
	"testing"
)

// The calls name the same keys and carry the same arguments as the
// scripts expect, whatever the allocations that build them.
func TestCallValues(t *testing.T) {
	n, err := NewNames("p:")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name       string
		call       Call
		keys, args []string
	}{
		{"acquire", n.AcquireCall("k{1}", "own", "lab", 30000, 0),
			[]string{"p:{k%7B1%7D}:lock", "p:{k%7B1%7D}:token"}, []string{"3:own:", "lab", "30000"}},
		{"acquire with a token", n.AcquireCall("k", "own", "", 5, 18446744073709551615),
			[]string{"p:{k}:lock", "p:{k}:token"}, []string{"3:own:", "", "5", "18446744073709551615"}},
		{"renew", n.RenewCall("k", "own", 42, 1000),
			[]string{"p:{k}:lock"}, []string{"3:own:42:", "1000"}},
		{"release", n.ReleaseCall("k", "", 18446744073709551615),
			[]string{"p:{k}:lock"}, []string{"0::18446744073709551615:", "p:{k}:free"}},
	} {
		if !slices.Equal(c.call.Keys, c.keys) || !slices.Equal(c.call.Args, c.args) {
			t.Errorf("%s: keys %q args %q, want %q %q", c.name, c.call.Keys, c.call.Args, c.keys, c.args)
		}
	}
	if got := GrantPrefix(string(make([]byte, 123)), 7); got != "123:"+string(make([]byte, 123))+":7:" {
		t.Errorf("GrantPrefix of a 123-byte owner = %q", got)
	}
}

// A cycle's calls cost the client one allocation per string they make and
// one for the array of keys and arguments: with 64 goroutines the client
// process and redis-server share the cores, so the client's work per cycle
// counts (redis/bench BenchmarkCPU64). Before, each name took two, the
// grant prefix three, and the keys and arguments an array each.
func TestCallAllocations(t *testing.T) {
	n, err := NewNames("")
	if err != nil {
		t.Fatal(err)
	}
	owner := "0123456789abcdef0123456789abcdef"
	for _, c := range []struct {
		name string
		max  float64
		f    func()
	}{
		// lock, counter, owner prefix, TTL, array
		{"acquire", 5, func() { n.AcquireCall("bench/key/1", owner, "host:1", 30000, 0) }},
		// lock, grant prefix, channel, array
		{"release", 4, func() { n.ReleaseCall("bench/key/1", owner, 1764280000123456) }},
		// lock, grant prefix, TTL, array
		{"renew", 4, func() { n.RenewCall("bench/key/1", owner, 1764280000123456, 30000) }},
	} {
		if got := testing.AllocsPerRun(100, c.f); got > c.max {
			t.Errorf("%s call: %.0f allocations, want at most %.0f", c.name, got, c.max)
		}
	}
}
