package core

import (
	"context"
	"strconv"
	"strings"
)

// Call is the keys and arguments of one script call, built once and sent
// to any number of nodes that share their Names (the masters of a Redlock
// round): the nodes only read it.
type Call struct {
	Keys, Args []string
	Token      uint64 // the token the call names or proposes; 0 if none
}

// AcquireCall is the call that claims key for 'ttl' milliseconds, with the
// token to grant proposed (0: each node mints its own).
func (n Names) AcquireCall(key, owner, label string, ttl int64, token uint64) Call {
	var p parts
	enc := Encode(key)
	size := 2*(len(n.prefix)+len(enc)) + len("{}:lock{}:token") + ownerPrefixLen(owner) + digits(uint64(ttl))
	if token != 0 {
		size += digits(token)
	}
	p.b.Grow(size)
	p.name(n, enc, "}:lock")
	p.name(n, enc, "}:token")
	p.ownerPrefix(owner)
	p.cut()
	p.number(uint64(ttl))
	p.cut()
	args := 3
	if token != 0 {
		p.number(token)
		p.cut()
		args = 4
	}
	ss := make([]string, 2+args)
	p.into(ss[:2], ss[2:3], ss[4:])
	ss[3] = label
	return Call{Keys: ss[:2:2], Args: ss[2:], Token: token}
}

// RenewCall is the call that extends key's lease to ttl milliseconds if
// owner and token hold it.
func (n Names) RenewCall(key, owner string, token uint64, ttl int64) Call {
	var p parts
	enc := Encode(key)
	p.b.Grow(len(n.prefix) + len(enc) + len("{}:lock") + grantPrefixLen(owner, token) + digits(uint64(ttl)))
	p.name(n, enc, "}:lock")
	p.grantPrefix(owner, token)
	p.number(uint64(ttl))
	p.cut()
	ss := make([]string, 3)
	p.into(ss)
	return Call{Keys: ss[:1:1], Args: ss[1:], Token: token}
}

// ReleaseCall is the call that deletes key's lease if owner and token hold
// it, and publishes on the key's channel.
func (n Names) ReleaseCall(key, owner string, token uint64) Call {
	var p parts
	enc := Encode(key)
	p.b.Grow(2*(len(n.prefix)+len(enc)) + len("{}:lock{}:free") + grantPrefixLen(owner, token))
	p.name(n, enc, "}:lock")
	p.grantPrefix(owner, token)
	p.name(n, enc, "}:free")
	ss := make([]string, 3)
	p.into(ss)
	return Call{Keys: ss[:1:1], Args: ss[1:], Token: token}
}

// parts writes the strings of one call into one buffer and cuts them
// apart, so that they cost one allocation together, of their exact size (a
// call's names, owner prefix and numbers were an allocation each): with 64
// goroutines the client process and redis-server share the cores, and the
// client's work per cycle counts (redis/bench BenchmarkCPU64).
type parts struct {
	b    strings.Builder
	cuts [6]int
	n    int
}

// digits is the length of v in decimal.
func digits(v uint64) int {
	n := 1
	for ; v >= 10; v /= 10 {
		n++
	}
	return n
}

// ownerPrefixLen is len(OwnerPrefix(owner)).
func ownerPrefixLen(owner string) int { return digits(uint64(len(owner))) + len(owner) + 2 }

// grantPrefixLen is len(GrantPrefix(owner, token)).
func grantPrefixLen(owner string, token uint64) int { return ownerPrefixLen(owner) + digits(token) + 1 }

// cut ends a string at the buffer's end.
func (p *parts) cut() {
	p.cuts[p.n] = p.b.Len()
	p.n++
}

// name writes the name prefix{enc} + end (end starts with '}').
func (p *parts) name(n Names, enc, end string) {
	p.b.WriteString(n.prefix)
	p.b.WriteByte('{')
	p.b.WriteString(enc)
	p.b.WriteString(end)
	p.cut()
}

// ownerPrefix writes OwnerPrefix(owner), uncut.
func (p *parts) ownerPrefix(owner string) {
	p.number(uint64(len(owner)))
	p.b.WriteByte(':')
	p.b.WriteString(owner)
	p.b.WriteByte(':')
}

// grantPrefix writes GrantPrefix(owner, token).
func (p *parts) grantPrefix(owner string, token uint64) {
	p.ownerPrefix(owner)
	p.number(token)
	p.b.WriteByte(':')
	p.cut()
}

// number writes v in decimal, uncut.
func (p *parts) number(v uint64) {
	var d [20]byte
	p.b.Write(strconv.AppendUint(d[:0], v, 10))
}

// into cuts the buffer into the strings written, filling the slices given
// in order.
func (p *parts) into(dst ...[]string) {
	s := p.b.String()
	i, from := 0, 0
	for _, d := range dst {
		for j := range d {
			d[j] = s[from:p.cuts[i]]
			from = p.cuts[i]
			i++
		}
	}
}

// Acquire claims key for 'ttl' milliseconds. It returns the new token, or
// the current lease when someone holds key.
func (n *Node) Acquire(ctx context.Context, key, owner, label string, ttl int64) (uint64, *Lease, error) {
	tok, l, _, err := n.AcquireWith(ctx, n.Names.AcquireCall(key, owner, label, ttl, 0))
	return tok, l, err
}

// AcquireWith runs an AcquireCall. When c proposes a token, the grant gets
// exactly it; when key's counter has reached it, the node grants nothing
// and returns the counter as stale (the lease, when someone holds key,
// comes first).
func (n *Node) AcquireWith(ctx context.Context, c Call) (tok uint64, held *Lease, stale uint64, err error) {
	r, err := Run(ctx, n.Client, AcquireScript, c.Keys, c.Args)
	if err != nil {
		return 0, nil, 0, scriptRefusal(c, err)
	}
	if s, ok := asString(r); ok { // granted: the token
		tok, ok := asToken(s)
		if !ok || c.Token != 0 && tok != c.Token {
			return 0, nil, 0, unexpected("acquire", r)
		}
		return tok, nil, 0, nil
	}
	a, ok := r.([]any)
	if !ok || len(a) < 2 {
		return 0, nil, 0, unexpected("acquire", r)
	}
	code, ok := asInt(a[0])
	switch {
	case ok && code == 0 && len(a) == 3:
		v, ok1 := asString(a[1])
		ms, ok2 := asInt(a[2])
		if !ok1 || !ok2 {
			return 0, nil, 0, unexpected("acquire", r)
		}
		l, err := ParseLease(v, ms)
		if err != nil {
			return 0, nil, 0, foreign(c.Keys[0], err.Error())
		}
		return 0, l, 0, nil
	case ok && code == 2 && len(a) == 2 && c.Token != 0:
		counter, ok := asToken(a[1])
		if !ok {
			return 0, nil, 0, unexpected("acquire", r)
		}
		return 0, nil, counter, nil
	}
	return 0, nil, 0, unexpected("acquire", r)
}

// Renew extends key's lease to ttl milliseconds if owner and token hold it.
func (n *Node) Renew(ctx context.Context, key, owner string, token uint64, ttl int64) (bool, error) {
	return n.RenewWith(ctx, n.Names.RenewCall(key, owner, token, ttl))
}

// RenewWith runs a RenewCall.
func (n *Node) RenewWith(ctx context.Context, c Call) (bool, error) {
	r, err := Run(ctx, n.Client, RenewScript, c.Keys, c.Args)
	if err != nil {
		return false, err
	}
	return parseBool("renew", r)
}

// Release deletes key's lease if owner and token hold it, and publishes on
// the key's channel. Token 0, which no grant has, matches nothing: a
// release that matched the owner alone could delete a later grant of the
// same owner.
func (n *Node) Release(ctx context.Context, key, owner string, token uint64) (bool, error) {
	if token == 0 {
		return false, nil
	}
	return n.ReleaseWith(ctx, n.Names.ReleaseCall(key, owner, token))
}

// ReleaseWith runs a ReleaseCall; one naming token 0 matches nothing.
func (n *Node) ReleaseWith(ctx context.Context, c Call) (bool, error) {
	if c.Token == 0 {
		return false, nil
	}
	r, err := Run(ctx, n.Client, ReleaseScript, c.Keys, c.Args)
	if err != nil {
		return false, err
	}
	return parseBool("release", r)
}
