// Package core holds what the redis and redlock stores share: the storage
// names of a lease, the Lua scripts and the calls that run them on one Redis
// node, reply parsing, and the pub/sub multiplexer behind wake-ups.
package core

import (
	"fmt"
	"strings"
)

// DefaultPrefix starts every storage name unless the caller picks another.
const DefaultPrefix = "leasehold:"

// Names builds the storage names of leases under one prefix.
//
// A lease on key k is stored as prefix{enc(k)}:lock (a string holding owner,
// token and label, with the lease's TTL) and prefix{enc(k)}:token (the
// counter, without TTL), and wakes waiters on the pub/sub channel
// prefix{enc(k)}:free. enc percent-encodes '%', '{' and '}', so the braces
// form a Redis Cluster hash tag around the whole key (both keys of a lease
// share a slot) and the closing brace ends the encoded key: no key's names
// are a prefix of another key's.
type Names struct {
	prefix string
}

// NewNames checks prefix and returns the names under it. An empty prefix
// means DefaultPrefix.
func NewNames(prefix string) (Names, error) {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if strings.ContainsAny(prefix, "{}") {
		return Names{}, fmt.Errorf("key prefix %q holds a brace; braces are reserved for the hash tag", prefix)
	}
	return Names{prefix: prefix}, nil
}

// Prefix returns the prefix.
func (n Names) Prefix() string { return n.prefix }

// Lock is the name of the lease hash of key.
func (n Names) Lock(key string) string { return n.name(key, "}:lock") }

// Counter is the name of the token counter of key.
func (n Names) Counter(key string) string { return n.name(key, "}:token") }

// Channel is the pub/sub channel that release publishes to for key.
func (n Names) Channel(key string) string { return n.name(key, "}:free") }

// name is prefix{enc(key)}, then end, made in one allocation: a cycle
// names three (the lock, the counter and the channel), and each was two
// before.
func (n Names) name(key, end string) string {
	return n.prefix + "{" + Encode(key) + end
}

// Encode percent-encodes '%', '{' and '}' in key and leaves every other
// byte as it is. It is injective, and its result holds no brace.
func Encode(key string) string {
	if !strings.ContainsAny(key, "%{}") {
		return key
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(key) + 8)
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c == '%' || c == '{' || c == '}' {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// KeyOfLock returns the key whose lease is stored under name, the inverse
// of Lock.
func (n Names) KeyOfLock(name string) (string, bool) {
	enc, ok := strings.CutPrefix(name, n.prefix+"{")
	if !ok {
		return "", false
	}
	enc, ok = strings.CutSuffix(enc, "}:lock")
	if !ok {
		return "", false
	}
	return Decode(enc)
}

// Decode inverts Encode; it fails on anything Encode does not produce.
func Decode(enc string) (string, bool) {
	if !strings.Contains(enc, "%") {
		return enc, !strings.ContainsAny(enc, "{}")
	}
	var b strings.Builder
	for i := 0; i < len(enc); i++ {
		c := enc[i]
		switch c {
		case '{', '}':
			return "", false
		case '%':
			if i+2 >= len(enc) {
				return "", false
			}
			switch enc[i+1 : i+3] {
			case "25":
				c = '%'
			case "7B":
				c = '{'
			case "7D":
				c = '}'
			default:
				return "", false
			}
			i += 2
		}
		b.WriteByte(c)
	}
	return b.String(), true
}
