package kube

import (
	"errors"
	"strconv"
	"testing"

	"github.com/leasehold-go/leasehold"
)

// FuzzParseRecord feeds parseRecord arbitrary annotation values and
// resourceVersions. It must never panic; what it accepts must round-trip
// through annotations and keep the store's invariants (a token from 1 and
// not above the resourceVersion; a held record's TTL within MinTTL to
// MaxTTL and owner of 32 hex digits; a released one with no owner or TTL);
// what it refuses must be a *leasehold.ForeignRecordError naming the Lease.
func FuzzParseRecord(f *testing.F) {
	h := held()
	f.Add(h[annFormat], h[annKey], h[annState], h[annOwner], h[annToken], h[annTTL], h[annLabel], h[annWrite], "7")
	f.Add("1", "k", "released", "", "3", "", "", "0123456789abcdef", "3")
	f.Add("1", "k", "held", ownerHash("x"), "18446744073709551615", "86400000", "", "0123456789abcdef", "18446744073709551615")
	f.Add("", "", "", "", "", "", "", "", "")
	f.Add("1", "k", "held", ownerHash("x"), "5", "1000", "l", "0123456789abcdef", "05")
	f.Fuzz(func(t *testing.T, fm, key, state, owner, token, ttl, label, write, rv string) {
		ann := map[string]string{}
		for _, kv := range [][2]string{{annFormat, fm}, {annKey, key}, {annState, state}, {annOwner, owner},
			{annToken, token}, {annTTL, ttl}, {annLabel, label}, {annWrite, write}} {
			if kv[1] != "" {
				ann[kv[0]] = kv[1]
			}
		}
		r, err := parseRecord("LEASE", key, rv, ann)
		if err != nil {
			var fe *leasehold.ForeignRecordError
			if !errors.As(err, &fe) || fe.Object != "LEASE" || fe.Reason == "" {
				t.Fatalf("refusal %v is not a ForeignRecordError naming LEASE", err)
			}
			return
		}
		rvn, err := strconv.ParseUint(rv, 10, 64)
		if r.Token == 0 || (err == nil && r.Token > rvn) || r.Key != key {
			t.Fatalf("accepted %+v at resourceVersion %q", r, rv)
		}
		if r.Held && (r.TTL < MinTTL || r.TTL > MaxTTL || !isHex(r.Owner, ownerLen)) ||
			!r.Held && (r.Owner != "" || r.TTL != 0 || r.Label != "") {
			t.Fatalf("accepted %+v", r)
		}
		back, err := parseRecord("LEASE", key, rv, r.annotations())
		if err != nil || back != r {
			t.Fatalf("round trip of %+v: %+v, %v", r, back, err)
		}
	})
}
