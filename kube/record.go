package kube

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/leasehold-go/leasehold"
	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// The metadata the store keeps on its Leases. The annotations are the
// store's record; the label lets List select the store's Leases.
const (
	annPrefix  = "leasehold-go.github.io/"
	annFormat  = annPrefix + "format" // "1"
	annKey     = annPrefix + "key"    // the key, as given
	annState   = annPrefix + "state"  // stateHeld or stateReleased
	annOwner   = annPrefix + "owner"  // ownerHash of the owner id (held only)
	annToken   = annPrefix + "token"  // the fencing token, decimal
	annTTL     = annPrefix + "ttl-ms" // the TTL in ms (held only)
	annLabel   = annPrefix + "label"  // the holder's label (held only; may be absent)
	annWrite   = annPrefix + "write"  // random per write: tells a landed write whose reply was lost
	labelOwner = "app.kubernetes.io/managed-by"
	labelValue = "leasehold"
	format     = "1"

	stateHeld     = "held"
	stateReleased = "released"

	ownerLen = 32 // hex digits of ownerHash
	writeLen = 16 // hex digits of nonce
	// maxLabel bounds a label read back (annotations may hold 256 KiB).
	maxLabel = 1024
	// maxReason bounds the part of a refused value quoted in its reason.
	maxReason = 120
)

// record is the store's state of one key, as its Lease's annotations say.
type record struct {
	Key   string
	Held  bool
	Owner string // ownerHash; "" when released
	Token uint64
	TTL   time.Duration // 0 when released
	Label string
	Write string
}

// ownerHash is what the Lease shows of an owner id: the id itself, the
// holder's proof of ownership, stays secret.
func ownerHash(owner string) string {
	h := sha256.Sum256([]byte("leasehold-kube-owner:" + owner))
	return hex.EncodeToString(h[:16])
}

func nonce() string {
	var b [writeLen / 2]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// annotations returns the record as the Lease's annotations.
func (r record) annotations() map[string]string {
	a := map[string]string{
		annFormat: format, annKey: r.Key, annToken: strconv.FormatUint(r.Token, 10), annWrite: r.Write,
	}
	if !r.Held {
		a[annState] = stateReleased
		return a
	}
	a[annState] = stateHeld
	a[annOwner] = r.Owner
	a[annTTL] = strconv.FormatInt(int64((r.TTL+time.Millisecond-1)/time.Millisecond), 10)
	if r.Label != "" {
		a[annLabel] = r.Label
	}
	return a
}

// foreign is the error for a Lease at object that is not one the store
// wrote for the key.
func foreign(object, format string, a ...any) error {
	return &leasehold.ForeignRecordError{Object: object, Reason: fmt.Sprintf(format, a...)}
}

func clip(s string) string {
	if len(s) > maxReason {
		return s[:maxReason] + "..."
	}
	return s
}

// parseRecord reads the store's record of key from the annotations of a
// Lease named object at resourceVersion rv, checking every value. A Lease
// the store did not write (no format annotation: someone else's), one of
// another key or format, or one with a value out of range, is refused
// with a *leasehold.ForeignRecordError naming object. A token above rv is
// refused too: the store's tokens are never above the resourceVersion of
// the write that set them (see the package doc).
func parseRecord(object, key, rv string, ann map[string]string) (record, error) {
	f, ok := ann[annFormat]
	if !ok {
		return record{}, foreign(object, "it has no %s annotation: it is someone else's Lease", annFormat)
	}
	if f != format {
		return record{}, foreign(object, "its %s is %q; this store writes %q", annFormat, clip(f), format)
	}
	if got := ann[annKey]; key != "" && got != key {
		return record{}, foreign(object, "its %s is %q, not the key %q", annKey, clip(got), clip(key))
	}
	r := record{Key: ann[annKey], Write: ann[annWrite]}
	if !isHex(r.Write, writeLen) {
		return record{}, foreign(object, "its %s %q is not %d hex digits", annWrite, clip(r.Write), writeLen)
	}
	tok, err := strconv.ParseUint(ann[annToken], 10, 64)
	if err != nil || tok == 0 {
		return record{}, foreign(object, "its %s %q is not a token from 1 to 2^64-1", annToken, clip(ann[annToken]))
	}
	r.Token = tok
	c, err := resourceversion.CompareResourceVersion(strconv.FormatUint(tok, 10), rv)
	if err != nil {
		return record{}, foreign(object, "its resourceVersion %q is not a comparable integer", clip(rv))
	}
	if c > 0 {
		return record{}, foreign(object, "its token %d is above its resourceVersion %s: the store never writes that", tok, rv)
	}
	switch ann[annState] {
	case stateReleased:
		for _, a := range []string{annOwner, annTTL, annLabel} {
			if _, ok := ann[a]; ok {
				return record{}, foreign(object, "it is released but has a %s annotation", a)
			}
		}
		return r, nil
	case stateHeld:
	default:
		return record{}, foreign(object, "its %s %q is neither %q nor %q", annState, clip(ann[annState]), stateHeld, stateReleased)
	}
	r.Held, r.Owner, r.Label = true, ann[annOwner], ann[annLabel]
	if !isHex(r.Owner, ownerLen) {
		return record{}, foreign(object, "its %s %q is not %d hex digits", annOwner, clip(r.Owner), ownerLen)
	}
	if len(r.Label) > maxLabel {
		return record{}, foreign(object, "its %s is %d bytes, over %d", annLabel, len(r.Label), maxLabel)
	}
	ms, err := strconv.ParseInt(ann[annTTL], 10, 64)
	if err != nil || ms < int64(MinTTL/time.Millisecond) || ms > int64(MaxTTL/time.Millisecond) {
		return record{}, foreign(object, "its %s %q is not a TTL from %s to %s", annTTL, clip(ann[annTTL]), MinTTL, MaxTTL)
	}
	r.TTL = time.Duration(ms) * time.Millisecond
	return r, nil
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// nextToken returns the token of a new grant: one more than the larger of
// last (the key's last token, 0 if none) and floor (a resourceVersion read
// before the write: the Lease's own, or a consistent list's when the
// Lease is absent). ok is false when that would pass 2^64-1, or floor is
// not a resourceVersion that fits 64 bits.
func nextToken(last uint64, floor string) (uint64, bool) {
	f, err := strconv.ParseUint(floor, 10, 64)
	if err != nil {
		return 0, false
	}
	m := max(last, f)
	if m == math.MaxUint64 {
		return 0, false
	}
	return m + 1, true
}
