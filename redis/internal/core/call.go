package core

import (
	"context"
	"strconv"
)

// Call is the keys and arguments of one script call, built once and sent
// to any number of nodes that share their Names (the masters of a Redlock
// round): the nodes only read it.
type Call struct {
	Keys, Args []string
	Token      uint64 // the token the call names or proposes; 0 if none
}

// AcquireCall is the call that claims key for 'ttl' milliseconds, with the
// token to grant proposed (0: each node mints its own). Keys and Args share
// one array.
func (n Names) AcquireCall(key, owner, label string, ttl int64, token uint64) Call {
	ss := make([]string, 5, 6)
	ss[0], ss[1] = n.Lock(key), n.Counter(key)
	ss[2], ss[3], ss[4] = OwnerPrefix(owner), label, strconv.FormatInt(ttl, 10)
	if token != 0 {
		ss = append(ss, strconv.FormatUint(token, 10))
	}
	return Call{Keys: ss[:2:2], Args: ss[2:], Token: token}
}

// RenewCall is the call that extends key's lease to ttl milliseconds if
// owner and token hold it.
func (n Names) RenewCall(key, owner string, token uint64, ttl int64) Call {
	ss := []string{n.Lock(key), GrantPrefix(owner, token), strconv.FormatInt(ttl, 10)}
	return Call{Keys: ss[:1:1], Args: ss[1:], Token: token}
}

// ReleaseCall is the call that deletes key's lease if owner and token hold
// it, and publishes on the key's channel.
func (n Names) ReleaseCall(key, owner string, token uint64) Call {
	ss := []string{n.Lock(key), GrantPrefix(owner, token), n.Channel(key)}
	return Call{Keys: ss[:1:1], Args: ss[1:], Token: token}
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
