package dynamodb

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/leasehold-go/leasehold"
)

// The attributes of the store's items. KeyAttribute is the table's
// partition key; the others are the store's record.
const (
	KeyAttribute = "key"
	attrFormat   = "leasehold"   // N: format
	attrState    = "state"       // S: stateHeld or stateFree
	attrToken    = "token"       // N: the key's latest token; never lowered
	attrVersion  = "version"     // S: random for every write
	attrOwner    = "owner"       // S: ownerHash of the holder's owner id (held)
	attrLabel    = "label"       // S: the holder's label (held, when not empty)
	attrTTL      = "ttl_ms"      // N: the lease's TTL (held)
	attrDeadline = "deadline_us" // N: the writer's wall clock at send + TTL, µs since 1970 (held)
)

// The states of an item.
const (
	stateHeld = "held"
	stateFree = "free"
)

// format is the version of the store's items; another one is refused.
const format = 1

// The bounds of what the store reads back: anything outside them is
// refused as foreign, so that the arithmetic on what is accepted cannot
// overflow.
const (
	minTTLms    = int64(MinTTL / time.Millisecond)
	maxTTLms    = int64(MaxTTL / time.Millisecond)
	ownerLen    = 32                 // hex digits of ownerHash
	versionLen  = 16                 // hex digits of nonce
	maxLabel    = 4096               // bytes of a label
	maxDeadline = int64(1) << 60     // µs: about the year 38 000; every deadline_us is below
	maxReason   = 120                // bytes of a refused value quoted in a reason
	numberChars = "0123456789"       // the only characters of the store's numbers
	hexChars    = "0123456789abcdef" // of its owner hashes and versions
)

// heldAttrs are the attributes of a held item; a free item has the first
// five only.
var heldAttrs = []string{KeyAttribute, attrFormat, attrState, attrToken, attrVersion, attrOwner, attrTTL, attrDeadline, attrLabel}

// item is the store's record of one key.
type item struct {
	Token      uint64
	State      string
	Version    string
	Owner      string // held only
	Label      string // held only
	TTLms      int64  // held only
	DeadlineUs int64  // held only
}

func ownerHash(owner string) string {
	h := sha256.Sum256([]byte("leasehold-dynamodb-owner:" + owner))
	return hex.EncodeToString(h[:16])
}

func nonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// heldItem is a grant of key to owner with token tok for ttl, written at
// the writer's wall-clock time now, with a new version.
func heldItem(owner, label string, tok uint64, ttl time.Duration, now time.Time) item {
	ms := int64((ttl + time.Millisecond - 1) / time.Millisecond)
	return item{Token: tok, State: stateHeld, Version: nonce(), Owner: ownerHash(owner), Label: label, TTLms: ms,
		DeadlineUs: now.UnixMicro() + ms*1000}
}

// ttl is a held item's TTL.
func (it *item) ttl() time.Duration { return time.Duration(it.TTLms) * time.Millisecond }

// deadline is a held item's writer's deadline by the writer's wall clock.
func (it *item) deadline() time.Time { return time.UnixMicro(it.DeadlineUs) }

// isHeld reports whether it is a held item (nil is not).
func (it *item) isHeld() bool { return it != nil && it.State == stateHeld }

// token is the item's token; 0 when absent.
func (it *item) token() uint64 {
	if it == nil {
		return 0
	}
	return it.Token
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
func num(n string) types.AttributeValue { return &types.AttributeValueMemberN{Value: n} }

// encode is the item as DynamoDB attributes, for key.
func (it *item) encode(key string) map[string]types.AttributeValue {
	m := map[string]types.AttributeValue{
		KeyAttribute: str(key),
		attrFormat:   num(strconv.Itoa(format)),
		attrState:    str(it.State),
		attrToken:    num(strconv.FormatUint(it.Token, 10)),
		attrVersion:  str(it.Version),
	}
	if it.State == stateHeld {
		m[attrOwner] = str(it.Owner)
		m[attrTTL] = num(strconv.FormatInt(it.TTLms, 10))
		m[attrDeadline] = num(strconv.FormatInt(it.DeadlineUs, 10))
		if it.Label != "" {
			m[attrLabel] = str(it.Label)
		}
	}
	return m
}

// foreign is the refusal of a value read back from object that is not
// one the store wrote.
func foreign(object, format string, a ...any) error {
	return &leasehold.ForeignRecordError{Object: object, Reason: fmt.Sprintf(format, a...)}
}

// clip shortens a quoted value for a reason.
func clip(s string) string {
	if len(s) > maxReason {
		return s[:maxReason] + "..."
	}
	return s
}

// parseItem checks the attributes read back from object (the item of
// key) and returns the store's record; nil attributes (no item) are nil.
// Anything the store does not write (a missing or unknown attribute, one
// of another type, a value out of range) is refused with a
// *leasehold.ForeignRecordError naming the object.
func parseItem(object, key string, m map[string]types.AttributeValue) (*item, error) {
	if m == nil {
		return nil, nil
	}
	a := attrs{m: m}
	if k := a.s(KeyAttribute); k != key {
		return nil, foreign(object, "its %s is %q, not %q", KeyAttribute, clip(k), clip(key))
	}
	if f := a.s(attrFormat); a.err == "" && f != strconv.Itoa(format) {
		return nil, foreign(object, "%q is %s, not %d (not the store's item, or another format)", attrFormat, clip(f), format)
	}
	it := &item{State: a.s(attrState), Version: a.s(attrVersion), Token: a.uint(attrToken, 1, math.MaxUint64)}
	switch {
	case a.err != "":
	case it.State != stateHeld && it.State != stateFree:
		a.bad("state %q is neither %q nor %q", clip(it.State), stateHeld, stateFree)
	case !isHex(it.Version, versionLen):
		a.bad("version %q is not %d hex digits", clip(it.Version), versionLen)
	}
	allowed := heldAttrs[:5]
	if a.err == "" && it.State == stateHeld {
		allowed = heldAttrs
		it.Owner, it.Label = a.s(attrOwner), a.opt(attrLabel)
		it.TTLms = int64(a.uint(attrTTL, uint64(minTTLms), uint64(maxTTLms)))
		it.DeadlineUs = int64(a.uint(attrDeadline, 0, uint64(maxDeadline)))
		switch {
		case a.err != "":
		case !isHex(it.Owner, ownerLen):
			a.bad("owner %q is not %d hex digits", clip(it.Owner), ownerLen)
		case len(it.Label) > maxLabel:
			a.bad("its label is %d bytes, over %d", len(it.Label), maxLabel)
		}
	}
	if a.err == "" {
		a.only(allowed, it.State)
	}
	if a.err != "" {
		return nil, foreign(object, "%s", a.err)
	}
	return it, nil
}

// attrs reads attributes, keeping the first problem found.
type attrs struct {
	m   map[string]types.AttributeValue
	err string
}

func (a *attrs) bad(format string, x ...any) {
	if a.err == "" {
		a.err = fmt.Sprintf(format, x...)
	}
}

// s is the string attribute name; "" (and a problem) when it is missing
// or not a string.
func (a *attrs) s(name string) string {
	v, ok := a.m[name]
	if !ok {
		a.bad("it has no %q attribute", name)
		return ""
	}
	if name == attrFormat || name == attrToken || name == attrTTL || name == attrDeadline {
		if n, ok := v.(*types.AttributeValueMemberN); ok {
			return n.Value
		}
		a.bad("its %q is not a number", name)
		return ""
	}
	if s, ok := v.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	a.bad("its %q is not a string", name)
	return ""
}

// opt is an optional string attribute; "" when missing.
func (a *attrs) opt(name string) string {
	if _, ok := a.m[name]; !ok {
		return ""
	}
	return a.s(name)
}

// uint is the number attribute name, a whole number from lo to hi
// written in decimal digits.
func (a *attrs) uint(name string, lo, hi uint64) uint64 {
	v := a.s(name)
	if a.err != "" {
		return 0
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || strings.Trim(v, numberChars) != "" || n < lo || n > hi {
		a.bad("%s %s is not a whole number from %d to %d", name, clip(v), lo, hi)
		return 0
	}
	return n
}

// only refuses an attribute not in names, the attributes of an item in
// state.
func (a *attrs) only(names []string, state string) {
	for name := range a.m {
		if !slices.Contains(names, name) {
			a.bad("attribute %q is not the store's (in a %s item)", clip(name), state)
			return
		}
	}
}

// isHex reports whether s is n lowercase hex digits.
func isHex(s string, n int) bool {
	return len(s) == n && strings.Trim(s, hexChars) == ""
}

// nextToken is the token of a new grant of a key whose item's token is
// last (0 when there is no item): one more than last, and at least the
// acquirer's wall clock now in µs, so that a deleted item restarts the
// key's tokens at the clock rather than at 1. It is false when last is the
// largest token: the key's tokens are exhausted.
func nextToken(last uint64, now time.Time) (uint64, bool) {
	if last == math.MaxUint64 {
		return 0, false
	}
	return max(last+1, uint64(max(now.UnixMicro(), 0))), true
}
