package zookeeper

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/go-zookeeper/zk"
	"github.com/leasehold-go/leasehold"
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
// one-to-one, and prefix-free but for those two: escapeKey(p) is a prefix
// of escapeKey(k) exactly when p is a prefix of k, unless p is "." or ".."
// (escapeKey(".") is "%2E", escapeKey(".x") is ".x"). Nothing relies on
// it: the store lists no keys by prefix, and each key is one component.
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
	seq  int32
}

// parseNode parses a child name "<id>-<sequence>", as leasehold names the
// nodes it creates: id is 32 lowercase hex digits (see idOf) and sequence
// the ten decimal digits ZooKeeper appends, a non-negative int32 (its
// counter is the parent's cversion; once that wraps past 2^31-1 the names
// it makes hold a minus sign and are refused too). It returns why a name
// leasehold does not create is refused.
func parseNode(name string) (node, error) {
	id, seqs, found := strings.Cut(name, "-")
	if !found {
		return node{}, errors.New(`the name is not "<id>-<sequence>"`)
	}
	if len(id) != idLen || strings.ToLower(id) != id {
		return node{}, fmt.Errorf("the id %.40q is not %d lowercase hex digits", id, idLen)
	}
	if _, err := hex.DecodeString(id); err != nil {
		return node{}, fmt.Errorf("the id %.40q is not %d lowercase hex digits", id, idLen)
	}
	if len(seqs) != seqLen || strings.Trim(seqs, "0123456789") != "" {
		return node{}, fmt.Errorf("the sequence %.20q is not %d decimal digits", seqs, seqLen)
	}
	seq, err := strconv.ParseInt(seqs, 10, 32)
	if err != nil {
		return node{}, fmt.Errorf("the sequence %s is out of ZooKeeper's range (0 to %d)", seqs, math.MaxInt32)
	}
	return node{name: name, id: id, seq: int32(seq)}, nil
}

// queue parses and sorts the children of a key's parent, oldest first. A
// name leasehold does not create is returned as foreign, with why.
func queue(children []string) (q []node, foreign string, why error) {
	q = make([]node, 0, len(children))
	for _, c := range children {
		n, err := parseNode(c)
		if err != nil {
			return nil, c, err
		}
		q = append(q, n)
	}
	slices.SortFunc(q, func(a, b node) int { return cmp.Compare(a.seq, b.seq) })
	return q, "", nil
}

// parentOf returns the parent node of key under base.
func parentOf(base, key string) string { return path.Join(base, escapeKey(key)) }

// tokenOf converts the creation zxid of node p, as ZooKeeper reported it,
// into a fencing token. A zxid is an int64, the leader's epoch in its high
// 32 bits and a counter in the low 32; no client can plant one (a create
// gets the ensemble's next zxid, whatever the node), and ZooKeeper moves to
// a new epoch before the counter wraps, so zxids only grow. Still, the
// conversion to uint64 must not turn a zxid whose epoch passed 2^31-1
// (negative) into a huge token, nor make a token of 0 (only nodes of the
// initial, empty state have zxid 0; 0 is never granted): a negative zxid
// is ErrTokensExhausted, 0 a foreign node.
func tokenOf(p string, czxid int64) (uint64, error) {
	switch {
	case czxid < 0:
		return 0, fmt.Errorf("%s: creation zxid %#x: ZooKeeper's epoch passed 2^31-1: %w", p, uint64(czxid), leasehold.ErrTokensExhausted)
	case czxid == 0:
		return 0, foreignErr(p, "creation zxid 0 (no node a client created has it)")
	}
	return uint64(czxid), nil
}

// checkHolder validates the stat of node p, the head of a key's queue,
// read back from ZooKeeper, and returns its token. A node leasehold creates
// is ephemeral: a persistent one (planted, with a name like leasehold's)
// would hold the key for ever, and is refused as foreign.
func checkHolder(p string, stat *zk.Stat) (uint64, error) {
	if stat.EphemeralOwner == 0 {
		return 0, foreignErr(p, "a persistent node (leasehold's are ephemeral; it would hold the key for ever)")
	}
	return tokenOf(p, stat.Czxid)
}
