package etcd

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// DefaultPrefix is the etcd key prefix under which the store keeps its keys
// when Options.Prefix is empty.
const DefaultPrefix = "leasehold/"

// Storage layout. A leasehold key k is escaped (see escapeKey) so that it holds
// no '/'. Its lease and its waiters are entries of one queue:
//
//	<prefix><escaped k>/q/<session lease id, 16 hex digits>-<slot>
//
// An entry is named by the session that put it (the etcd lease it lives
// under) and the lowest slot of k that the session had free, so a key's
// acquisitions reuse a few names (one per grant or waiter a session has at
// once on the key) instead of a new name per acquisition: etcd keeps a
// deleted key in its index until a compaction, and every range over the
// queue (each acquire's) walks those too. The entry's value holds the
// owner (a hash of it: see value); the entry with the lowest CreateRevision
// holds the key, and its CreateRevision is the fencing token. The others
// wait, in CreateRevision order (FIFO).
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

// EntryKey returns the etcd key of the entry that a session on etcd lease
// id puts in key's queue in its slot slot, in a store with the given prefix
// ("" means DefaultPrefix). A session uses the lowest slot of the key it
// has free, so one key's acquisitions reuse a few names.
func EntryKey(prefix, key string, id clientv3.LeaseID, slot int) string {
	var b strings.Builder
	q := QueuePrefix(prefix, key)
	b.Grow(len(q) + 20)
	b.WriteString(q)
	h := strconv.FormatUint(uint64(id), 16)
	b.WriteString("0000000000000000"[len(h):])
	b.WriteString(h)
	b.WriteByte('-')
	b.WriteString(strconv.Itoa(slot))
	return b.String()
}

// ownerID is what an entry stores of an owner id: the first 128 bits of
// its SHA-256 (in hex, in the value). The owner id itself is the holder's
// proof of ownership, so it is never stored.
type ownerID [16]byte

// ownerHash returns owner's ownerID.
func ownerHash(owner string) ownerID {
	sum := sha256.Sum256([]byte(owner))
	return ownerID(sum[:16])
}

// An entry stores JSON with the owner first:
// {"owner":"<ownerHash>","label":"..."} (the label only if not empty; see
// decodeValue). Renew and release prove the owner with two compares of the
// value's bytes (see ownerCmps), which need the owner's hash but not the
// label.

// ownerPrefix is how every value of an entry of the owner with hash h
// begins. The byte after it is ',' or '}'.
func ownerPrefix(h ownerID) string { return `{"owner":"` + hex.EncodeToString(h[:]) + `"` }

// encodeValue returns the stored value for an owner with hash h and label.
func encodeValue(h ownerID, label string) string {
	if label == "" {
		return ownerPrefix(h) + "}"
	}
	l, err := json.Marshal(label)
	if err != nil { // cannot happen: a string
		panic(err)
	}
	return ownerPrefix(h) + `,"label":` + string(l) + "}"
}

// ownerCmps returns the compares that hold only if entry name exists and
// its value is an entry of the owner with hash h: the value lies strictly
// between ownerPrefix(h) and ownerPrefix(h)+"~", which (bytes compared in
// order) only a value that starts with ownerPrefix(h) and goes on with a
// byte below '~' does. The label is not needed.
func ownerCmps(name string, h ownerID) []clientv3.Cmp {
	p := ownerPrefix(h)
	return []clientv3.Cmp{
		clientv3.Compare(clientv3.Value(name), ">", p),
		clientv3.Compare(clientv3.Value(name), "<", p+"~"),
	}
}

// isOwnerValue reports whether v, an entry's value, is one of the owner
// with hash h.
func isOwnerValue(v []byte, h ownerID) bool {
	p := ownerPrefix(h)
	return len(v) > len(p) && string(v[:len(p)]) == p && v[len(p)] < '~'
}
