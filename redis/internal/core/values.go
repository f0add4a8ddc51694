package core

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold"
)

// MaxToken is the largest token the scripts grant: 2^53 - 1, the largest
// integer Lua's numbers (doubles) hold exactly. A counter at or above it
// grants nothing more (leasehold.ErrTokensExhausted).
const MaxToken = 1<<53 - 1

// maxPTTL is the longest time to live a leasehold lease has: the scripts
// set no more than leasehold.MaxTTL, in milliseconds.
const maxPTTL = int64(leasehold.MaxTTL / time.Millisecond)

// ErrForeignValue: a lease key holds a value leasehold did not write. It
// matches leasehold.ErrForeignRecord; the errors that wrap it carry a
// *leasehold.ForeignRecordError naming the key.
var ErrForeignValue = fmt.Errorf("lease key holds a value that is not a leasehold lease (%w)", leasehold.ErrForeignRecord)

// foreign reports the Redis key name holding a value that is not a
// leasehold record, and why.
func foreign(name, reason string) error {
	return fmt.Errorf("%w: %w", ErrForeignValue, &leasehold.ForeignRecordError{Object: name, Reason: reason})
}

// quote shows a value read back in an error, cut to 40 bytes.
func quote(v string) string {
	if len(v) > 40 {
		v = v[:40] + "..."
	}
	return strconv.Quote(v)
}

// ParseToken reads a token as the scripts write it: decimal digits, from 1
// to MaxToken. The error says what is wrong.
func ParseToken(s string) (uint64, error) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, fmt.Errorf("token %s is not a decimal number", quote(s))
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n > MaxToken {
		return 0, fmt.Errorf("token %s is above the largest token, %d", quote(s), uint64(MaxToken))
	}
	if n == 0 {
		return 0, fmt.Errorf("token %s is not positive", quote(s))
	}
	return n, nil
}

// ParseLease reads a lease value, <len(owner)>:<owner>:<token>:<label> with
// both numbers in their canonical decimal form, and its PTTL in
// milliseconds. The error, a reason, says what is wrong: a
// value of another shape, a token out of range, or a lease without a TTL
// or with one longer than any lease's.
func ParseLease(v string, pttl int64) (*Lease, error) {
	bad := func(what string) (*Lease, error) {
		return nil, fmt.Errorf("value %s %s", quote(v), what)
	}
	i := strings.IndexByte(v, ':')
	if i <= 0 {
		return bad("is not <len(owner)>:<owner>:<token>:<label>")
	}
	n, err := strconv.Atoi(v[:i])
	if err != nil || n < 0 || n > len(v) || strconv.Itoa(n) != v[:i] || len(v) < i+1+n+1 || v[i+1+n] != ':' {
		return bad("does not start with <len(owner)>:<owner>:")
	}
	owner, rest := v[i+1:i+1+n], v[i+2+n:]
	tok, label, ok := strings.Cut(rest, ":")
	if !ok {
		return bad("has no :<label> after its token")
	}
	t, err := ParseToken(tok)
	if err != nil {
		return bad("holds a bad token: " + err.Error())
	}
	if strconv.FormatUint(t, 10) != tok {
		return bad("holds token " + strconv.Quote(tok) + " with leading zeros")
	}
	switch {
	case pttl == -1:
		return bad("has no TTL (a lease always has one)")
	case pttl < 0:
		return bad(fmt.Sprintf("has PTTL %d", pttl))
	case pttl > maxPTTL:
		return bad(fmt.Sprintf("has a TTL of %d ms, above the longest lease's %d ms", pttl, maxPTTL))
	}
	return &Lease{Owner: owner, Label: label, Token: t, Remaining: time.Duration(pttl) * time.Millisecond}, nil
}

// The acquire script refuses with an error reply starting with refusal,
// then the kind of refusal and what it concerns, then the value quoted.
const refusal = "LEASEHOLD "

// scriptRefusal turns the acquire script's refusals into typed errors
// naming the counter: a counter at the largest token (or a clock or
// proposal beyond it) is leasehold.ErrTokensExhausted, a counter that is
// not a token a *leasehold.ForeignRecordError. Other errors are returned
// as they are.
func scriptRefusal(c Call, err error) error {
	msg, ok := strings.CutPrefix(err.Error(), refusal)
	if !ok || len(c.Keys) < 2 {
		return err
	}
	counter := c.Keys[1]
	kind, val, _ := strings.Cut(msg, " ")
	switch kind {
	case "exhausted-counter":
		return fmt.Errorf("token counter %s holds %s, the largest token or above: %w", counter, val, leasehold.ErrTokensExhausted)
	case "exhausted-time":
		return fmt.Errorf("token counter %s: the server's TIME in microseconds, %s, is above the largest token: %w", counter, val, leasehold.ErrTokensExhausted)
	case "exhausted-proposal":
		return fmt.Errorf("token counter %s: the proposed token %s is above the largest token: %w", counter, val, leasehold.ErrTokensExhausted)
	case "foreign-counter":
		return &leasehold.ForeignRecordError{Object: counter, Reason: "the token counter holds " + val + ", not a token"}
	}
	return err
}

// IsRefusal reports whether err is a refusal of the data on the server (a
// foreign value, exhausted tokens) rather than a failure to reach it.
func IsRefusal(err error) bool {
	return errors.Is(err, leasehold.ErrForeignRecord) || errors.Is(err, leasehold.ErrTokensExhausted)
}
