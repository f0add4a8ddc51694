package consul

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/consul/api"
	"github.com/leasehold-go/leasehold"
)

// DefaultPrefix is the Consul KV prefix under which the store keeps its keys
// when Options.Prefix is empty.
const DefaultPrefix = "leasehold/"

// Flags is the KV entry flags value that marks a leasehold grant (Consul's
// own api.Lock marks its keys with another value, api.LockFlagValue).
const Flags uint64 = 0x6c65617365686f6c // "leasehol"

// Storage layout. A leasehold key k is one Consul KV entry
//
//	<prefix><escaped k>
//
// locked (?acquire=) by the store's session while held. Its value is JSON
// with the grant's token, the holder's label and a hash of the owner id
// (never the id itself, which is the owner's proof). Released or
// invalidated entries stay, unlocked, with their last token, which the next
// grant's token exceeds.

// keptBytes are the bytes other than letters and digits that escapeKey
// keeps as they are (the package doc lists them).
const keptBytes = "-_.:@+=,"

// safe reports whether escapeKey keeps byte c as it is.
func safe(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte(keptBytes, c) >= 0
}

// escapeKey maps a key to a string that holds only letters, digits, the
// bytes of keptBytes, and ~XX escapes (two upper-case hex digits) of every other byte:
// no '/', no space (Consul refuses names with leading or trailing spaces),
// no '%' (Consul's KV endpoint decodes %XX once more when it checks a name),
// nothing an HTTP path or Consul's filter of unprintable characters would
// change. A leading '.' is escaped too, so that no name is a "." or ".."
// path segment. The code is prefix-free: escapeKey(p) is a prefix of escapeKey(k)
// exactly when p is a prefix of k, which List relies on.
func escapeKey(key string) string {
	var b strings.Builder
	b.Grow(len(key) + 8)
	const hexdig = "0123456789ABCDEF"
	for i := 0; i < len(key); i++ {
		c := key[i]
		if safe(c) && !(i == 0 && c == '.') {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('~')
		b.WriteByte(hexdig[c>>4])
		b.WriteByte(hexdig[c&15])
	}
	return b.String()
}

// unescapeKey inverts escapeKey. ok is false for a string escapeKey cannot
// produce.
func unescapeKey(s string) (key string, ok bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '~' {
			if !safe(c) || (i == 0 && c == '.') {
				return "", false
			}
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(s) {
			return "", false
		}
		v, err := hex.DecodeString(s[i+1 : i+3])
		if err != nil || strings.ToUpper(s[i+1:i+3]) != s[i+1:i+3] || (safe(v[0]) && !(i == 0 && v[0] == '.')) {
			return "", false
		}
		b.WriteByte(v[0])
		i += 2
	}
	return b.String(), true
}

// KeyName returns the Consul KV key that holds key in a store with the given
// prefix ("" means DefaultPrefix). While a grant holds it, the entry is
// locked by the granting store's session and its value holds the token.
func KeyName(prefix, key string) string {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return prefix + escapeKey(key)
}

// ownerTag is what the entry stores of an owner id: the first 128 bits of
// its SHA-256, in hex.
func ownerTag(owner string) string {
	sum := sha256.Sum256([]byte(owner))
	return hex.EncodeToString(sum[:16])
}

// value is what a held entry stores.
type value struct {
	Token uint64 `json:"token"` // the grant's fencing token
	Owner string `json:"owner"` // ownerTag of the owner id
	Label string `json:"label,omitempty"`
	// The locking session's TTL and lock-delay, for what a reader that
	// does not keep the grant can say: how long the key can stay held
	// (Holder.MaxRemaining), how long a lock-delay refusal lasts.
	SessionTTLMS int64 `json:"session_ttl_ms,omitempty"`
	LockDelayMS  int64 `json:"lock_delay_ms,omitempty"`
}

// encodeValue returns the stored value for a grant of token to owner with
// label, locked by session ss.
func encodeValue(owner, label string, token uint64, ss *session) []byte {
	b, err := json.Marshal(value{Token: token, Owner: ownerTag(owner), Label: label,
		SessionTTLMS: ss.ttl.Milliseconds(), LockDelayMS: ss.lockDelay.Milliseconds()})
	if err != nil { // cannot happen: two strings
		panic(err)
	}
	return b
}

// decodeEntry returns the value stored in kv; ok is false if it is not a
// value of ours (see parseEntry).
func decodeEntry(kv *api.KVPair) (value, bool) {
	v, err := parseEntry(kv)
	return v, err == nil
}

// parseEntry returns the value stored in kv, or why it is not a valid
// leasehold value: flags other than Flags (the key is Consul's api.Lock's,
// or someone else's), a value that is not our JSON, an owner tag that is not
// 32 lower-case hex digits, a session TTL or lock-delay outside Consul's
// bounds, or a ModifyIndex of 0 (Consul never writes one). An entry written
// before tokens were stored in values has the token it was granted with,
// its ModifyIndex.
func parseEntry(kv *api.KVPair) (value, error) {
	var x value
	dec := json.NewDecoder(bytes.NewReader(kv.Value))
	switch {
	case kv.Flags != Flags:
		return value{}, fmt.Errorf("its flags are %#x, not leasehold's %#x", kv.Flags, Flags)
	case kv.ModifyIndex == 0:
		return value{}, errors.New("its ModifyIndex is 0")
	case dec.Decode(&x) != nil || dec.More():
		return value{}, fmt.Errorf("its value %.40q is not leasehold's JSON", kv.Value)
	case len(x.Owner) != 32 || strings.Trim(x.Owner, "0123456789abcdef") != "":
		return value{}, fmt.Errorf("its owner %.40q is not 32 lower-case hex digits", x.Owner)
	case x.SessionTTLMS < 0 || x.SessionTTLMS > MaxSessionTTL.Milliseconds():
		return value{}, fmt.Errorf("its session_ttl_ms %d is outside 0 to %d", x.SessionTTLMS, MaxSessionTTL.Milliseconds())
	case x.LockDelayMS < 0 || x.LockDelayMS > MaxLockDelay.Milliseconds():
		return value{}, fmt.Errorf("its lock_delay_ms %d is outside 0 to %d", x.LockDelayMS, MaxLockDelay.Milliseconds())
	}
	if x.Token == 0 {
		x.Token = kv.ModifyIndex
	}
	return x, nil
}

// legacyReleased reports whether kv is a key released by a version of this
// store from before tokens were stored in values: that version unlocked with
// no value and no flags, so such an entry is unlocked (no Session), has flags
// 0 and an empty value. Its last grant's token was a ModifyIndex no greater
// than its own ModifyIndex, which is therefore its previous token.
func legacyReleased(kv *api.KVPair) bool {
	return kv.Session == "" && kv.Flags == 0 && len(kv.Value) == 0 && kv.ModifyIndex != 0
}

// foreignEntry is the error for an entry under the store's prefix that is
// not a valid leasehold value (why, from parseEntry), for op on key.
func foreignEntry(op, key string, kv *api.KVPair, why error) error {
	return &leasehold.StoreError{Store: Name, Op: op, Err: fmt.Errorf("key %q: %w", key,
		&leasehold.ForeignRecordError{Object: "Consul KV entry " + kv.Key, Reason: why.Error()})}
}
