package zookeeper

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/leasehold-go/leasehold"
)

// formatNode writes a node's name as ZooKeeper makes it from the name
// leasehold asks for ("<id>-") and the parent's counter: the counter in
// ten digits (Java's %010d).
func formatNode(id string, seq int32) string { return fmt.Sprintf("%s-%010d", id, seq) }

// unescapeKey inverts escapeKey; ok is false for a name escapeKey cannot
// produce.
func unescapeKey(s string) (key string, ok bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case safeByte(c):
			b.WriteByte(c)
		case c == '%' && i+2 < len(s):
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil || s[i+1:i+3] != strings.ToUpper(s[i+1:i+3]) {
				return "", false
			}
			b.WriteByte(byte(v))
			i += 2
		default:
			return "", false
		}
	}
	key = b.String()
	if escapeKey(key) != s {
		return "", false
	}
	return key, true
}

const testID = "00112233445566778899aabbccddeeff"

func TestParseNode(t *testing.T) {
	for _, tc := range []struct {
		name string
		seq  int32
		bad  string // in the refusal
	}{
		{testID + "-0000000000", 0, ""},
		{testID + "-0000000042", 42, ""},
		{testID + "-2147483647", math.MaxInt32, ""},
		{testID, 0, "<id>-<sequence>"},
		{"", 0, "<id>-<sequence>"},
		{"not-ours", 0, "the id"},
		{strings.ToUpper(testID) + "-0000000000", 0, "the id"},
		{testID[:31] + "g-0000000000", 0, "the id"},
		{testID + "0-0000000000", 0, "the id"},
		{testID + "-000000000", 0, "the sequence"},
		{testID + "-00000000000", 0, "the sequence"},
		{testID + "-00000000000000000000", 0, "the sequence"},
		{testID + "-+000000001", 0, "the sequence"},
		{testID + "--000000001", 0, "the sequence"}, // what ZooKeeper names once its counter wraps
		{testID + "-00000000x1", 0, "the sequence"},
		{testID + "-2147483648", 0, "out of ZooKeeper's range"},
		{testID + "-9999999999", 0, "out of ZooKeeper's range"},
	} {
		n, err := parseNode(tc.name)
		switch {
		case tc.bad == "" && (err != nil || n.seq != tc.seq || n.id != testID || n.name != tc.name):
			t.Errorf("parseNode(%q) = %+v, %v; want seq %d", tc.name, n, err, tc.seq)
		case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)):
			t.Errorf("parseNode(%q): %v, want a refusal naming %q", tc.name, err, tc.bad)
		}
	}
}

func TestQueue(t *testing.T) {
	q, bad, why := queue([]string{testID + "-0000000010", testID + "-0000000002", testID + "-0000000100"})
	if bad != "" || why != nil || len(q) != 3 || q[0].seq != 2 || q[1].seq != 10 || q[2].seq != 100 {
		t.Errorf("queue = %+v, %q, %v; want sequences 2, 10, 100", q, bad, why)
	}
	q, bad, why = queue([]string{testID + "-0000000010", testID + "-10"})
	if q != nil || bad != testID+"-10" || why == nil {
		t.Errorf("queue with a foreign name = %+v, %q, %v; want the name refused", q, bad, why)
	}
}

// TestTokenOf checks the conversion of a creation zxid to a token: every
// positive zxid is its own token; 0 is a foreign node and a negative one
// (an epoch past 2^31-1) exhausts the tokens. Zxids cannot be planted
// (ZooKeeper assigns them), so this guard is tested here, on the pure
// function.
func TestTokenOf(t *testing.T) {
	for _, tc := range []struct {
		zxid int64
		want uint64
		err  error
	}{
		{1, 1, nil},
		{0x100000005, 0x100000005, nil},
		{math.MaxInt64, math.MaxInt64, nil},
		{0, 0, leasehold.ErrForeignRecord},
		{-1, 0, leasehold.ErrTokensExhausted},
		{math.MinInt64, 0, leasehold.ErrTokensExhausted},
	} {
		got, err := tokenOf("/b/k/n", tc.zxid)
		if got != tc.want || !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
			t.Errorf("tokenOf(%#x) = %d, %v; want %d, %v", tc.zxid, got, err, tc.want, tc.err)
		}
		if err != nil && !strings.Contains(err.Error(), "/b/k/n") {
			t.Errorf("tokenOf(%#x): %v does not name the node", tc.zxid, err)
		}
	}
	if _, err := tokenOf("/b/k/n", 0); !errors.Is(err, ErrForeignNode) {
		t.Errorf("tokenOf(0): %v, want an ErrForeignNode", err)
	}
}

func TestCheckHolder(t *testing.T) {
	for _, tc := range []struct {
		stat zk.Stat
		want uint64
		err  error
	}{
		{zk.Stat{EphemeralOwner: 7, Czxid: 42}, 42, nil},
		{zk.Stat{EphemeralOwner: 0, Czxid: 42}, 0, leasehold.ErrForeignRecord},
		{zk.Stat{EphemeralOwner: 7, Czxid: 0}, 0, leasehold.ErrForeignRecord},
		{zk.Stat{EphemeralOwner: 7, Czxid: -5}, 0, leasehold.ErrTokensExhausted},
	} {
		got, err := checkHolder("/b/k/n", &tc.stat)
		if got != tc.want || !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
			t.Errorf("checkHolder(%+v) = %d, %v; want %d, %v", tc.stat, got, err, tc.want, tc.err)
		}
		var fr *leasehold.ForeignRecordError
		if errors.As(err, &fr) && (fr.Object != "/b/k/n" || fr.Reason == "") {
			t.Errorf("checkHolder(%+v): %v does not name the node and the problem", tc.stat, err)
		}
	}
}

func TestErrForeignNodeIsForeignRecord(t *testing.T) {
	if !errors.Is(ErrForeignNode, leasehold.ErrForeignRecord) {
		t.Error("ErrForeignNode does not match leasehold.ErrForeignRecord")
	}
	err := foreign("acquire", "/b/k/x", "why")
	var fr *leasehold.ForeignRecordError
	if !errors.Is(err, ErrForeignNode) || !errors.Is(err, leasehold.ErrStore) || !errors.As(err, &fr) || fr.Object != "/b/k/x" || fr.Reason != "why" {
		t.Errorf("foreign: %v, want a StoreError holding a ForeignRecordError that is an ErrForeignNode", err)
	}
}
