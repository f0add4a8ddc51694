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
// no '/', then:
//
//	<prefix><escaped k>/h          the holder: created by Acquire, token = its CreateRevision
//	<prefix><escaped k>/w/<id>     a queued AcquireWait caller (FIFO by CreateRevision)
//
// Because an escaped key never holds '/', the per-key prefix "<prefix><escaped k>/"
// is never a prefix of another key's names: lock "a" cannot see "a/x" or "ab"
// (the flaw of etcd's concurrency.Mutex, whose lock "a" ranges over "a/x"'s keys).
const (
	holderSuffix = "/h"
	waitersPart  = "/w/"
)

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

// HolderKey returns the etcd key that holds the lease on key in a store
// with the given prefix ("" means DefaultPrefix). Its CreateRevision is the
// lease's fencing token.
func HolderKey(prefix, key string) string {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return prefix + escapeKey(key) + holderSuffix
}

// waitersPrefix returns the prefix of key's queued waiters.
func waitersPrefix(prefix, key string) string {
	return prefix + escapeKey(key) + waitersPart
}

// value is what a holder or waiter key stores. The owner id is the holder's
// proof of ownership, so only its SHA-256 is stored: anyone who can read etcd
// sees who holds a key (the label) but cannot learn the owner id.
type value struct {
	Owner string `json:"owner_sha256"`
	Label string `json:"label,omitempty"`
}

// encodeValue returns the stored value for owner and label. It is
// deterministic: Renew and Release compare it byte for byte.
func encodeValue(owner, label string) string {
	sum := sha256.Sum256([]byte(owner))
	b, err := json.Marshal(value{Owner: hex.EncodeToString(sum[:]), Label: label})
	if err != nil { // cannot happen: two strings
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
