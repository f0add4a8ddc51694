package core

import (
	"slices"
	"strconv"
	"strings"
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
	// Against the names and prefixes made one by one.
	long := strings.Repeat("%{}x", 40)
	for _, key := range []string{"", "k", long} {
		for _, owner := range []string{"", "o", long} {
			for _, tok := range []uint64{1, 18446744073709551615} {
				a, r, rn := n.AcquireCall(key, owner, "l", 1, tok), n.ReleaseCall(key, owner, tok), n.RenewCall(key, owner, tok, 9)
				want := [][]string{
					{n.Lock(key), n.Counter(key), OwnerPrefix(owner), "l", "1", strconv.FormatUint(tok, 10)},
					{n.Lock(key), GrantPrefix(owner, tok), n.Channel(key)},
					{n.Lock(key), GrantPrefix(owner, tok), "9"},
				}
				for i, got := range [][]string{append(a.Keys, a.Args...), append(r.Keys, r.Args...), append(rn.Keys, rn.Args...)} {
					if !slices.Equal(got, want[i]) {
						t.Errorf("call %d on key %q owner %q token %d: %q, want %q", i, key, owner, tok, got, want[i])
					}
				}
			}
		}
	}
	for _, v := range []uint64{0, 9, 10, 99, 100, 18446744073709551615} {
		if digits(v) != len(strconv.FormatUint(v, 10)) {
			t.Errorf("digits(%d) = %d", v, digits(v))
		}
	}
	if got := GrantPrefix(string(make([]byte, 123)), 7); got != "123:"+string(make([]byte, 123))+":7:" {
		t.Errorf("GrantPrefix of a 123-byte owner = %q", got)
	}
}

// A call costs the client two allocations: its strings, written into one
// buffer, and the array of its keys and arguments. With 64 goroutines the
// client process and redis-server share the cores, so the client's work
// per cycle counts (redis/bench BenchmarkCPU64). Before, each name took
// two, the grant prefix three, the TTL one, and the keys and arguments an
// array each.
func TestCallAllocations(t *testing.T) {
	n, err := NewNames("")
	if err != nil {
		t.Fatal(err)
	}
	owner := "0123456789abcdef0123456789abcdef"
	long := strings.Repeat(owner, 40)
	for _, c := range []struct {
		name string
		max  float64
		f    func()
	}{
		{"acquire", 2, func() { n.AcquireCall("bench/key/1", owner, "host:1", 30000, 0) }},
		{"acquire with a token", 2, func() { n.AcquireCall("bench/key/1", owner, "host:1", 30000, 1764280000123456) }},
		{"release", 2, func() { n.ReleaseCall("bench/key/1", owner, 1764280000123456) }},
		{"renew", 2, func() { n.RenewCall("bench/key/1", owner, 1764280000123456, 30000) }},
		{"release by a long owner", 2, func() { n.ReleaseCall("bench/key/1", long, 18446744073709551615) }},
		{"acquire by a long owner", 2, func() { n.AcquireCall("bench/key/1", long, "", 1<<62, 1<<63) }},
	} {
		if got := testing.AllocsPerRun(100, c.f); got > c.max {
			t.Errorf("%s call: %.0f allocations, want at most %.0f", c.name, got, c.max)
		}
	}
}
