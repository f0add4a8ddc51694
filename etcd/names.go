package etcd

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// DefaultPrefix is the etcd key prefix under which the store keeps its keys
// when Options.Prefix is empty.
const DefaultPrefix = "leasehold/"

// Storage layout. A leasehold key k is escaped (see escapeKey) so that it holds
// no '/'. Its lease and its waiters are entries of one queue:
//
//	<prefix><escaped k>/q/<id>
//
// where id is the first 128 bits of SHA-256(owner id), in hex. The entry
// with the lowest CreateRevision holds the key; its CreateRevision is the
// fencing token. The others wait, in CreateRevision order (FIFO).
//
// Because an escaped key never holds '/', the queue prefix
// "<prefix><escaped k>/q/" is never a prefix of another key's names: lock "a"
// cannot see "a/x" or "ab" (the flaw of etcd's concurrency.Mutex, whose lock
// "a" ranges over "a/x"'s keys).
const queuePart = "/q/"

// escapeKey maps a key to a string without '/'. It escapes only '%' and '/'
// (as %25 and %2F), so names stay readable in etcdctl. The escaping is a
// prefix-free code: escapeKey(p) is a prefix of escapeKey(k) exactly when p is
// a prefix of k, which List relies on.
func escapeKey(key string) string {
	if !strings.ContainsAny(key, "%/") {
		return key
	}
	var b strings.Builder
	b.Grow(len(key) + 8)
	for i := 0; i < len(key); i++ {
		switch c := key[i]; c {
		case '%':
			b.WriteString("%25")
		case '/':
			b.WriteString("%2F")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// unescapeKey inverts escapeKey. ok is false for a string escapeKey cannot produce.
func unescapeKey(s string) (key string, ok bool) {
	if !strings.Contains(s, "%") {
		return s, !strings.Contains(s, "/")
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '/':
			return "", false
		case s[i] != '%':
			b.WriteByte(s[i])
		case strings.HasPrefix(s[i:], "%25"):
			b.WriteByte('%')
			i += 2
		case strings.HasPrefix(s[i:], "%2F"):
			b.WriteByte('/')
			i += 2
		default:
			return "", false
		}
	}
	return b.String(), true
}

// QueuePrefix returns the etcd key prefix of key's queue in a store with the
// given prefix ("" means DefaultPrefix).
func QueuePrefix(prefix, key string) string {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return prefix + escapeKey(key) + queuePart
}

// EntryKey returns the etcd key of owner's entry in key's queue: while
// owner holds key, the entry's CreateRevision is the lease's token.
func EntryKey(prefix, key, owner string) string {
	sum := sha256.Sum256([]byte(owner))
	return QueuePrefix(prefix, key) + hex.EncodeToString(sum[:16])
}

// value is what an entry stores: the holder's label. The owner id is the
// holder's proof of ownership, so it is never stored; the entry's name holds
// a hash of it.
type value struct {
	Label string `json:"label,omitempty"`
}

// encodeValue returns the stored value for label.
func encodeValue(label string) string {
	b, err := json.Marshal(value{Label: label})
	if err != nil { // cannot happen: one string
		panic(err)
	}
	return string(b)
}

// decodeLabel returns the label stored in v, or "" if v is not a value of ours.
func decodeLabel(v []byte) string {
	var x value
	if json.Unmarshal(v, &x) != nil {
		return ""
	}
	return x.Label
}
