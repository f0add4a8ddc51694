package kube

import (
	"errors"
	"maps"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

// held returns the annotations of a valid held record of key "k".
func held() map[string]string {
	r := record{Key: "k", Held: true, Owner: ownerHash("o"), Token: 7, TTL: 1500 * time.Millisecond, Label: "host:1", Write: nonce()}
	return r.annotations()
}

// with returns a copy of a with the keys and values kv set ("<delete>"
// deletes).
func with(a map[string]string, kv ...string) map[string]string {
	a = maps.Clone(a)
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "<delete>" {
			delete(a, kv[i])
			continue
		}
		a[kv[i]] = kv[i+1]
	}
	return a
}

func TestParseRecord(t *testing.T) {
	released := (record{Key: "k", Token: 7, Write: nonce()}).annotations()
	for _, c := range []struct {
		name string
		ann  map[string]string
		rv   string
		want string // "" accepts
	}{
		{"held", held(), "7", ""},
		{"released", released, "9", ""},
		{"someone else's", map[string]string{"x": "y"}, "9", "someone else's Lease"},
		{"nil annotations", nil, "9", "someone else's Lease"},
		{"other format", with(held(), annFormat, "2"), "9", `format is "2"`},
		{"other key", with(held(), annKey, "other"), "9", `not the key "k"`},
		{"token above resourceVersion", held(), "6", "above its resourceVersion"},
		{"resourceVersion not a number", held(), "abc", "not a comparable integer"},
		{"token 0", with(held(), annToken, "0"), "9", "not a token"},
		{"token not decimal", with(held(), annToken, "0x7"), "9", "not a token"},
		{"token too big", with(held(), annToken, "18446744073709551616"), "99999999999999999999", "not a token"},
		{"bad state", with(held(), annState, "maybe"), "9", "neither"},
		{"released with owner", with(released, annOwner, ownerHash("o")), "9", "released but has"},
		{"owner not hex", with(held(), annOwner, strings.Repeat("g", 32)), "9", "hex digits"},
		{"owner missing", with(held(), annOwner, "<delete>"), "9", "hex digits"},
		{"write missing", with(held(), annWrite, "<delete>"), "9", "hex digits"},
		{"ttl under MinTTL", with(held(), annTTL, "999"), "9", "not a TTL"},
		{"ttl over MaxTTL", with(held(), annTTL, "86400001"), "9", "not a TTL"},
		{"ttl huge", with(held(), annTTL, "9223372036854775807"), "9", "not a TTL"},
		{"label too long", with(held(), annLabel, strings.Repeat("x", maxLabel+1)), "9", "over"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := parseRecord("LEASE", "k", c.rv, c.ann)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				back, err := parseRecord("LEASE", "k", c.rv, r.annotations())
				if err != nil || back != r {
					t.Fatalf("round trip: %+v, %v; want %+v", back, err, r)
				}
				return
			}
			var fe *leasehold.ForeignRecordError
			if !errors.As(err, &fe) || fe.Object != "LEASE" || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a ForeignRecordError naming LEASE saying %q", err, c.want)
			}
		})
	}
}

func TestNextToken(t *testing.T) {
	for _, c := range []struct {
		last  uint64
		floor string
		want  uint64
		ok    bool
	}{
		{0, "1", 2, true},
		{5, "3", 6, true},
		{3, "5", 6, true},
		{0, "18446744073709551614", math.MaxUint64, true},
		{math.MaxUint64, "5", 0, false},
		{0, "18446744073709551615", 0, false},
		{0, "18446744073709551616", 0, false},
		{0, "x", 0, false},
		{0, "", 0, false},
	} {
		got, ok := nextToken(c.last, c.floor)
		if got != c.want || ok != c.ok {
			t.Errorf("nextToken(%d, %q) = %d, %v; want %d, %v", c.last, c.floor, got, ok, c.want, c.ok)
		}
	}
}

func TestObservations(t *testing.T) {
	o := newObservations()
	t0 := time.Now()
	steps := []struct {
		rv   string
		ttl  time.Duration
		at   time.Duration
		want time.Duration
	}{
		{"5", time.Second, 0, time.Second}, // first look
		{"5", time.Second, 400 * time.Millisecond, 600 * time.Millisecond},
		{"6", time.Second, 500 * time.Millisecond, time.Second}, // renewed: starts again
		{"6", time.Second, 1500 * time.Millisecond, 0},          // unchanged for the TTL: expired
		{"6", 2 * time.Second, 1600 * time.Millisecond, 2 * time.Second},
	}
	for i, s := range steps {
		if got := o.remaining("L", s.rv, s.ttl, t0.Add(s.at)); got != s.want {
			t.Errorf("step %d: remaining = %s, want %s", i, got, s.want)
		}
	}
	o.forget("L")
	if got := o.remaining("L", "6", 2*time.Second, t0.Add(5*time.Second)); got != 2*time.Second {
		t.Errorf("after forget: remaining = %s, want the whole TTL", got)
	}
	for i := range maxObserved + 10 {
		o.remaining(string(rune('a'+i%26))+strings.Repeat("x", i/26), "1", time.Second, t0.Add(time.Duration(i)))
	}
	if n := len(o.seen); n > maxObserved {
		t.Errorf("%d observations kept, over %d", n, maxObserved)
	}
}

func TestParseURL(t *testing.T) {
	for _, c := range []struct {
		url  string
		want urlConfig
		bad  string
	}{
		{url: "kube:///ns", want: urlConfig{namespace: "ns"}},
		{url: "kube:///", want: urlConfig{}},
		{url: "kube://", want: urlConfig{}},
		{url: "kube:///ns?kubeconfig=/a/b&context=c", want: urlConfig{namespace: "ns", kubeconfig: "/a/b", kcontext: "c"}},
		{url: "kube://in-cluster/ns", want: urlConfig{inCluster: true, namespace: "ns"}},
		{url: "kube://in-cluster", want: urlConfig{inCluster: true}},
		{url: "kube://in-cluster/ns?context=c", bad: "takes no kubeconfig"},
		{url: "kube://somehost/ns", bad: "want kube:///"},
		{url: "kube://u:p@/ns", bad: "want kube:///"},
		{url: "s3:///ns", bad: "want kube:///"},
		{url: "kube:///Bad_NS", bad: "namespace"},
		{url: "kube:///a/b", bad: "namespace"},
		{url: "kube:///ns?token=x", bad: "unknown parameter"},
		{url: "kube:///ns?context=a&context=b", bad: "2 times"},
	} {
		got, err := parseURL(c.url)
		if c.bad != "" {
			if err == nil || !strings.Contains(err.Error(), c.bad) || !strings.Contains(err.Error(), Name) {
				t.Errorf("%s: got %v, want an error of the %s store saying %q", c.url, err, Name, c.bad)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", c.url, got, err, c.want)
		}
	}
}

func TestObjectName(t *testing.T) {
	seen := map[string]string{}
	for _, k := range []string{"", "a", "a/x", "A", strings.Repeat("k", 4096), "ключ", "a\x00"} {
		n := objectName(k)
		if len(n) != len("leasehold-")+40 || strings.Trim(n, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			t.Errorf("objectName(%q) = %q: not a valid fixed-length object name", k, n)
		}
		if other, dup := seen[n]; dup {
			t.Errorf("keys %q and %q share %s", k, other, n)
		}
		seen[n] = k
	}
}
