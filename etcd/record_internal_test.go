package etcd

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/sessionpool"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestTokenOf checks the conversion of a revision to a token: every
// positive revision is its own token; 0 is a foreign entry and a negative
// one (a revision that wrapped past 2^63-1) exhausts the tokens, rather
// than convert to a huge or zero uint64. Revisions cannot be planted (etcd
// assigns them), so this guard is tested here, on the pure function.
func TestTokenOf(t *testing.T) {
	for _, tc := range []struct {
		rev  int64
		want uint64
		err  error
	}{
		{1, 1, nil},
		{12345, 12345, nil},
		{math.MaxInt64, math.MaxInt64, nil},
		{0, 0, leasehold.ErrForeignRecord},
		{-1, 0, leasehold.ErrTokensExhausted},
		{math.MinInt64, 0, leasehold.ErrTokensExhausted},
	} {
		got, err := tokenOf("leasehold/k/q/x", tc.rev)
		if got != tc.want || !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
			t.Errorf("tokenOf(%d) = %d, %v; want %d, %v", tc.rev, got, err, tc.want, tc.err)
		}
		if err != nil && !strings.Contains(err.Error(), "leasehold/k/q/x") {
			t.Errorf("tokenOf(%d): %v does not name the entry", tc.rev, err)
		}
	}
}

func TestParseEntryName(t *testing.T) {
	for _, tc := range []struct {
		tail string
		id   int64
		slot int
		bad  string // in the refusal
	}{
		{"0000000000abcdef-0", 0xabcdef, 0, ""},
		{"7fffffffffffffff-12", math.MaxInt64, 12, ""},
		{"ffffffffffffffff-2147483647", -1, 1<<31 - 1, ""},
		{"0000000000abcdef", 0, 0, "<lease id>-<slot>"},
		{"0000000000000000-0", 0, 0, "lease id 0"},
		{"0000000000ABCDEF-0", 0, 0, "lowercase hex"},
		{"abcdef-0", 0, 0, "16 lowercase hex"},
		{"00000000000abcdefg-0", 0, 0, "16 lowercase hex"},
		{"000000000000abcg-0", 0, 0, "16 lowercase hex"},
		{"0000000000abcdef-", 0, 0, "slot"},
		{"0000000000abcdef-01", 0, 0, "slot"},
		{"0000000000abcdef-+1", 0, 0, "slot"},
		{"0000000000abcdef--1", 0, 0, "slot"},
		{"0000000000abcdef-2147483648", 0, 0, "slot"},
		{"0000000000abcdef-1-2", 0, 0, "slot"},
	} {
		id, slot, err := parseEntryName(tc.tail)
		switch {
		case tc.bad == "" && (err != nil || int64(id) != tc.id || slot != tc.slot):
			t.Errorf("parseEntryName(%q) = %x, %d, %v; want %x, %d", tc.tail, id, slot, err, tc.id, tc.slot)
		case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)):
			t.Errorf("parseEntryName(%q): %v, want a refusal naming %q", tc.tail, err, tc.bad)
		}
	}
}

func TestDecodeValue(t *testing.T) {
	h := ownerHash("o")
	for _, v := range []string{encodeValue(h, ""), encodeValue(h, "x"), encodeValue(h, "<a & \"b\">\n\u2028é"), encodeValue(h, "\xff")} {
		got, label, err := decodeValue([]byte(v))
		if err != nil || got != h || !isOwnerValue([]byte(v), h) {
			t.Errorf("decodeValue(%s) = %x, %q, %v", v, got, label, err)
		}
	}
	p := ownerPrefix(h)
	for _, v := range []string{p + `,"label":""}`, p + `,"label":"<"}`, p + `,"label":"\u003c"}`, p + `,"label":"a" }`} {
		if _, _, err := decodeValue([]byte(v)); err != nil {
			t.Errorf("decodeValue(%s): %v", v, err)
		}
	}
	for _, tc := range []struct{ v, bad string }{
		{"", "does not begin"},
		{"garbage", "does not begin"},
		{"null", "does not begin"},
		{"{}", "does not begin"},
		{` {"owner":"` + p[10:42] + `"}`, "does not begin"},
		{`{"owner":""}`, "owner"},
		{`{"owner":"` + strings.ToUpper(p[10:42]) + `"}`, "owner"},
		{`{"owner":"00112233445566778899aabbccddeef"}`, "owner"},
		{`{"owner":"00112233445566778899aabbccddeeffaa"}`, "owner"},
		{`{"owner":"00112233445566778899aabbccddeefg"}`, "owner"},
		{p, "goes on"},
		{p + `,"other":1}`, "goes on"},
		{p + `}x`, "goes on"},
		{p + ` }`, "goes on"},
		{p + `,"label":1}`, "not a JSON string"},
		{p + `,"label":"a","x":1}`, "not a JSON string"},
		{p + `,"label":"a}`, "not a JSON string"},
		{p + `,"label":}`, "not a JSON string"},
		{p + `,"owner":"` + p[10:42] + `"}`, "goes on"},
		{`{"label":"x","owner":"` + p[10:42] + `"}`, "does not begin"},
	} {
		if _, _, err := decodeValue([]byte(tc.v)); err == nil || !strings.Contains(err.Error(), tc.bad) {
			t.Errorf("decodeValue(%s): %v, want a refusal naming %q", tc.v, err, tc.bad)
		}
	}
}

func TestCheckEntry(t *testing.T) {
	const q = "leasehold/k/q/"
	good := func() *mvccpb.KeyValue {
		return &mvccpb.KeyValue{Key: []byte(q + "0000000000abcdef-3"), Lease: 0xabcdef, CreateRevision: 42, Value: []byte(encodeValue(ownerHash("o"), "l"))}
	}
	tok, label, err := checkEntry(q, good(), false)
	if err != nil || tok != 42 || label != "l" {
		t.Fatalf("checkEntry(a valid entry) = %d, %q, %v", tok, label, err)
	}
	for _, tc := range []struct {
		what     string
		change   func(kv *mvccpb.KeyValue)
		keysOnly bool
		err      error
		bad      string
	}{
		{"keys only", func(kv *mvccpb.KeyValue) { kv.Value = nil }, true, nil, ""},
		{"another queue", func(kv *mvccpb.KeyValue) { kv.Key = []byte("leasehold/j/q/0000000000abcdef-3") }, false, leasehold.ErrForeignRecord, "not in the queue"},
		{"bad name", func(kv *mvccpb.KeyValue) { kv.Key = []byte(q + "x") }, false, leasehold.ErrForeignRecord, "<lease id>-<slot>"},
		{"no lease", func(kv *mvccpb.KeyValue) { kv.Lease = 0 }, false, leasehold.ErrForeignRecord, "no lease"},
		{"other lease", func(kv *mvccpb.KeyValue) { kv.Lease = 7 }, false, leasehold.ErrForeignRecord, "0000000000000007"},
		{"revision 0", func(kv *mvccpb.KeyValue) { kv.CreateRevision = 0 }, false, leasehold.ErrForeignRecord, "create revision 0"},
		{"revision wrapped", func(kv *mvccpb.KeyValue) { kv.CreateRevision = math.MinInt64 }, false, leasehold.ErrTokensExhausted, "wrapped"},
		{"bad value", func(kv *mvccpb.KeyValue) { kv.Value = []byte("x") }, false, leasehold.ErrForeignRecord, "does not begin"},
	} {
		kv := good()
		tc.change(kv)
		_, _, err := checkEntry(q, kv, tc.keysOnly)
		if (err == nil) != (tc.err == nil) || !errors.Is(err, tc.err) || err != nil && !strings.Contains(err.Error(), tc.bad) {
			t.Errorf("%s: checkEntry: %v, want %v naming %q", tc.what, err, tc.err, tc.bad)
		}
		var fr *leasehold.ForeignRecordError
		if errors.As(err, &fr) && fr.Object != string(kv.Key) {
			t.Errorf("%s: the refusal names %q, not the entry %q", tc.what, fr.Object, kv.Key)
		}
	}
}

func TestLeaseTTL(t *testing.T) {
	for _, tc := range []struct {
		sec  int64
		want int64 // seconds
	}{{-5, 0}, {0, 0}, {1, 1}, {maxLeaseTTL, maxLeaseTTL}, {maxLeaseTTL + 1, 0}, {math.MaxInt64, 0}} {
		if got := leaseTTL(tc.sec); int64(got.Seconds()) != tc.want || got < 0 {
			t.Errorf("leaseTTL(%d) = %s, want %d s", tc.sec, got, tc.want)
		}
	}
}

func TestCheckGrant(t *testing.T) {
	for _, tc := range []struct {
		id        int64
		ttl, want int64
		ok        bool
	}{
		{0xabc, 3, 3, true},
		{0xabc, 5, 3, true}, // etcd's minimum TTL is longer
		{0xabc, 2, 3, false},
		{0xabc, -1, 3, false},
		{0, 3, 3, false},
		{0xabc, maxLeaseTTL + 1, 3, false},
	} {
		err := checkGrant(clientv3.LeaseID(tc.id), tc.ttl, tc.want)
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, leasehold.ErrForeignRecord) {
			t.Errorf("checkGrant(%x, %d, %d) = %v, want ok %v", tc.id, tc.ttl, tc.want, err, tc.ok)
		}
	}
}

// TestExtendBounded: a keepalive answer with a TTL beyond the lease's own
// moves the lease's known expiry no further than the lease's TTL; one that
// is not positive, or beyond etcd's maximum (which would overflow a
// time.Duration), does not move it.
func TestExtendBounded(t *testing.T) {
	sent := time.Now()
	for _, ttl := range []int64{3, 4, 1 << 40, math.MaxInt64, -1, 0} {
		ss := &session{leaseTTL: 3 * time.Second}
		ss.Init(sessionpool.Config[string, *grantRec, orphan]{Class: time.Second})
		ss.Extend(sent)
		ss.extend(sent, ttl)
		want := sent.Add(3 * time.Second)
		if ttl <= 0 || ttl > maxLeaseTTL {
			want = sent
		}
		if got := ss.Expiry(); !got.Equal(want) {
			t.Errorf("extend(%d s) on a 3 s lease: expiry %s after sending, want %s", ttl, got.Sub(sent), want.Sub(sent))
		}
	}
}
