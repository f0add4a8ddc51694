package zookeeper

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"path"
	"slices"
	"strconv"
	"strings"
)

// DefaultBase is the node under which the store keeps its keys when the URL
// (or Options.Base) names none.
const DefaultBase = "/leasehold"

// Storage layout. A leasehold key k is escaped (see escapeKey) into one path
// component, so its queue is one parent node:
//
//	<base>/<escaped k>/<id>-<sequence>
//
// The parent is a container node (ZooKeeper deletes it once its last child
// is gone). Its children are ephemeral sequential nodes of the stores'
// sessions: id is the first 128 bits of SHA-256 of the attempt's owner id, in
// hex (the owner id itself, the owner's proof, is never stored), and the
// 10-digit sequence is ZooKeeper's. The child with the lowest sequence holds
// the key; its creation zxid (Czxid) is the fencing token. The others wait,
// in sequence order (FIFO). An escaped key holds no '/', so no key's parent
// is a prefix of another key's nodes: lock "a" never ranges over "a/x".

// escapeKey maps a key to one ZooKeeper path component: ASCII letters,
// digits and "-_.~" stay; every other byte (among them '/', '%', and the
// UTF-8 bytes of non-ASCII runes, which ZooKeeper partly refuses in paths) is
// written %XX. The names "." and ".." are escaped whole. The code is
// prefix-free: escapeKey(p) is a prefix of escapeKey(k) exactly when p is a
// prefix of k.
func escapeKey(key string) string {
	if key == "." || key == ".." {
		return strings.Repeat("%2E", len(key))
	}
	var b strings.Builder
	b.Grow(len(key) + 8)
	const hexdigits = "0123456789ABCDEF"
	for i := 0; i < len(key); i++ {
		c := key[i]
		if safeByte(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexdigits[c>>4])
		b.WriteByte(hexdigits[c&15])
	}
	return b.String()
}

func safeByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == '~'
}

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

// idOf returns the name prefix of an attempt's nodes: the first 128 bits of
// SHA-256 of its owner id, in hex.
func idOf(owner string) string {
	sum := sha256.Sum256([]byte(owner))
	return hex.EncodeToString(sum[:16])
}

const (
	idLen  = 32
	seqLen = 10
)

// node is a child of a key's parent node, parsed from its name.
type node struct {
	name string
	id   string
	seq  int64
}

// parseNode parses a child name "<id>-<sequence>"; ok is false for a name
// leasehold does not create.
func parseNode(name string) (node, bool) {
	id, seqs, found := strings.Cut(name, "-")
	if !found || len(id) != idLen || len(seqs) < seqLen {
		return node{}, false
	}
	if _, err := hex.DecodeString(id); err != nil || strings.ToLower(id) != id {
		return node{}, false
	}
	seq, err := strconv.ParseInt(seqs, 10, 64)
	if err != nil || seq < 0 {
		return node{}, false
	}
	return node{name: name, id: id, seq: seq}, true
}

// queue parses and sorts the children of a key's parent, oldest first. A
// name leasehold does not create is returned as foreign.
func queue(children []string) (q []node, foreign string) {
	q = make([]node, 0, len(children))
	for _, c := range children {
		n, ok := parseNode(c)
		if !ok {
			return nil, c
		}
		q = append(q, n)
	}
	slices.SortFunc(q, func(a, b node) int { return cmp.Compare(a.seq, b.seq) })
	return q, ""
}

// parentOf returns the parent node of key under base.
func parentOf(base, key string) string { return path.Join(base, escapeKey(key)) }
