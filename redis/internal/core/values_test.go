package core

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold"
)

func TestParseToken(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64 // 0: refused
		why  string
	}{
		{"1", 1, ""},
		{"42", 42, ""},
		{"0042", 42, ""},
		{"9007199254740991", MaxToken, ""},
		{"9007199254740992", 0, "above the largest token"},
		{"18446744073709551615", 0, "above the largest token"},
		{"18446744073709551616", 0, "above the largest token"},
		{"0", 0, "not positive"},
		{"", 0, "not a decimal number"},
		{"-1", 0, "not a decimal number"},
		{"+1", 0, "not a decimal number"},
		{"1e5", 0, "not a decimal number"},
		{" 7", 0, "not a decimal number"},
		{"0x10", 0, "not a decimal number"},
	} {
		got, err := ParseToken(c.in)
		if got != c.want || (err == nil) != (c.why == "") || err != nil && !strings.Contains(err.Error(), c.why) {
			t.Errorf("ParseToken(%q) = %d, %v; want %d, %q", c.in, got, err, c.want, c.why)
		}
	}
}

func TestParseLeaseRefusals(t *testing.T) {
	for _, c := range []struct {
		v    string
		pttl int64
		why  string
	}{
		{"1:o:5:l", 1000, ""},
		{"1:o:5:", 86_400_000, ""},
		{"1:o:5:l", 0, ""},
		{"1:o:5:l", -1, "no TTL"},
		{"1:o:5:l", -2, "PTTL -2"},
		{"1:o:5:l", 86_400_001, "above the longest lease's"},
		{"1:o:18446744073709551615:l", 1000, "above the largest token"},
		{"1:o:-3:l", 1000, "not a decimal number"},
		{"1:o:0:l", 1000, "not positive"},
		{"1:o:5", 1000, "no :<label>"},
		{"9999999999999999999:o:5:l", 1000, "does not start with"},
		{"x", 1000, "is not <len(owner)>"},
		{"01:o:5:l", 1000, "does not start with"},
		{"1:o:05:l", 1000, "leading zeros"},
	} {
		l, err := ParseLease(c.v, c.pttl)
		if (err == nil) != (c.why == "") || err != nil && !strings.Contains(err.Error(), c.why) {
			t.Errorf("ParseLease(%q, %d) = %+v, %v; want refusal %q", c.v, c.pttl, l, err, c.why)
		}
	}
}

func TestScriptRefusals(t *testing.T) {
	c := Names{prefix: DefaultPrefix}.AcquireCall("k", "o", "l", 1000, 0)
	counter := c.Keys[1]
	for _, r := range []struct {
		reply  string
		target error
	}{
		{`LEASEHOLD exhausted-counter "18446744073709551615"`, leasehold.ErrTokensExhausted},
		{`LEASEHOLD exhausted-time "99999999999999999"`, leasehold.ErrTokensExhausted},
		{`LEASEHOLD exhausted-proposal "9007199254740992"`, leasehold.ErrTokensExhausted},
		{`LEASEHOLD foreign-counter "abc"`, leasehold.ErrForeignRecord},
	} {
		err := scriptRefusal(c, errors.New(r.reply))
		if !errors.Is(err, r.target) || !strings.Contains(err.Error(), counter) {
			t.Errorf("%s: %v, want %v naming %s", r.reply, err, r.target, counter)
		}
	}
	var fe *leasehold.ForeignRecordError
	if err := scriptRefusal(c, errors.New(`LEASEHOLD foreign-counter "abc"`)); !errors.As(err, &fe) || fe.Object != counter {
		t.Errorf("foreign counter: %v, want a *ForeignRecordError naming %s", err, counter)
	}
	for _, other := range []string{"WRONGTYPE Operation against a key", `LEASEHOLD bad-proposal "x"`, "LEASEHOLD"} {
		in := errors.New(other)
		if err := scriptRefusal(c, in); err != in {
			t.Errorf("%q: %v, want it returned as it is", other, err)
		}
	}
	if !errors.Is(foreign("x", "why"), leasehold.ErrForeignRecord) || !errors.Is(ErrForeignValue, leasehold.ErrForeignRecord) {
		t.Error("ErrForeignValue does not match leasehold.ErrForeignRecord")
	}
}

// FuzzLeaseReply: a holder reply of any lease value and PTTL is refused
// as a *leasehold.ForeignRecordError naming the lease key, or accepted with
// a token and a remaining time in range that write back to the same value.
func FuzzLeaseReply(f *testing.F) {
	for _, s := range []struct {
		v    string
		pttl int64
	}{
		{"1:o:5:l", 1000}, {"0::1:", 1}, {"3:a:b:9007199254740991:c:d", 86_400_000},
		{"1:o:18446744073709551615:l", 1000}, {"1:o:5:l", -1}, {"1:o:5:l", 1 << 62},
		{"2:o:5:l", 5}, {"-1::1:l", 5}, {"", 0},
	} {
		f.Add(s.v, s.pttl)
	}
	n := &Node{Names: Names{prefix: DefaultPrefix}}
	lock := n.Names.Lock("k")
	f.Fuzz(func(t *testing.T, v string, pttl int64) {
		n.Client = &canned{reply: []any{v, pttl}}
		l, err := n.Holder(context.Background(), "k")
		if err != nil {
			var fe *leasehold.ForeignRecordError
			if l != nil || !errors.As(err, &fe) || fe.Object != lock || fe.Reason == "" || !errors.Is(err, ErrForeignValue) {
				t.Fatalf("holder of %q, %d = %+v, %v; want a ForeignRecordError naming %s", v, pttl, l, err, lock)
			}
			return
		}
		if l.Token < 1 || l.Token > MaxToken || l.Remaining < 0 || l.Remaining > leasehold.MaxTTL {
			t.Fatalf("holder of %q, %d accepted %+v out of range", v, pttl, l)
		}
		if back := GrantPrefix(l.Owner, l.Token) + l.Label; back != v || l.Remaining.Milliseconds() != pttl {
			t.Fatalf("holder of %q, %d = %+v, written back as %q", v, pttl, l, back)
		}
	})
}

// FuzzTokenReply: a token or counter the acquire script returns is
// accepted exactly when ParseToken accepts it, in range, written back by
// strconv as the same number; else the reply is an error.
func FuzzTokenReply(f *testing.F) {
	for _, s := range []string{"1", "0", "0042", "9007199254740991", "9007199254740992", "18446744073709551615", "-1", "1e5", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseToken(s)
		if err != nil {
			if n != 0 || !strings.Contains(err.Error(), "token ") {
				t.Fatalf("ParseToken(%q) = %d, %v", s, n, err)
			}
		} else if n < 1 || n > MaxToken || strings.TrimLeft(s, "0") != strconv.FormatUint(n, 10) {
			t.Fatalf("ParseToken(%q) = %d", s, n)
		}
		node := &Node{Client: &canned{reply: s}}
		tok, held, aerr := node.Acquire(context.Background(), "k", "o", "l", 1000)
		if (aerr == nil) != (err == nil) || tok != n || held != nil {
			t.Fatalf("acquire reply %q = %d, %v, %v; ParseToken: %d, %v", s, tok, held, aerr, n, err)
		}
	})
}
