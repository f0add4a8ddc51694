package serve

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"sync"
	"time"

	"github.com/leasehold-go/leasehold"
)

// handles keeps the grants of a backend whose grants are bound to the
// acquiring process (Info.PortableGrants false), each under a random
// handle. It is the only lease state the server keeps, and it dies with the
// process.
type handles struct {
	mu    sync.Mutex
	m     map[string]*bound
	index map[grantID]string // the handle of each kept grant, by key and token
}

// grantID names a grant without its owner.
type grantID struct {
	key   string
	token uint64
}

type bound struct {
	g       leasehold.Grant // as the store returned it, Private and Lost included
	expires time.Time       // when its TTL ends, by this server's clock
}

func newHandles() *handles {
	return &handles{m: make(map[string]*bound), index: make(map[grantID]string)}
}

// newHandle returns 128 random bits in hex.
func newHandle() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// put keeps g and returns its handle.
func (h *handles) put(g leasehold.Grant, now time.Time) string {
	id := newHandle()
	h.mu.Lock()
	h.m[id] = &bound{g: g, expires: now.Add(g.TTL)}
	h.index[grantID{g.Key, g.Token}] = id
	h.mu.Unlock()
	return id
}

// get returns the grant under id if key, owner and token match it (the
// owner compared in constant time), else false. Without id (a client that
// rebuilt the grant from its key, owner and token, as the CLI's one-shot
// renew does), it finds the grant by key and token, and returns its id.
func (h *handles) get(id, key, owner string, token uint64) (string, leasehold.Grant, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, known := h.m[id]; !known {
		id = h.index[grantID{key, token}]
	}
	b, ok := h.m[id]
	if !ok || b.g.Key != key || b.g.Token != token || subtle.ConstantTimeCompare([]byte(b.g.Owner), []byte(owner)) != 1 {
		return "", leasehold.Grant{}, false
	}
	return id, b.g, true
}

// renewed records that the grant under id was renewed as g.
func (h *handles) renewed(id string, g leasehold.Grant, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if b, ok := h.m[id]; ok {
		b.g.TTL = g.TTL
		b.expires = now.Add(g.TTL)
	}
}

// drop forgets the grant under id.
func (h *handles) drop(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.remove(id)
}

// remove forgets the grant under id. h.mu must be held.
func (h *handles) remove(id string) {
	if b, ok := h.m[id]; ok {
		delete(h.index, grantID{b.g.Key, b.g.Token})
		delete(h.m, id)
	}
}

// expired removes and returns the grants whose TTL ended before now.
func (h *handles) expired(now time.Time) []leasehold.Grant {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []leasehold.Grant
	for id, b := range h.m {
		if now.After(b.expires) {
			out = append(out, b.g)
			h.remove(id)
		}
	}
	return out
}

// drain removes and returns every grant.
func (h *handles) drain() []leasehold.Grant {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]leasehold.Grant, 0, len(h.m))
	for id, b := range h.m {
		out = append(out, b.g)
		h.remove(id)
	}
	return out
}

// len returns how many grants are kept.
func (h *handles) len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.m)
}

// find returns the kept grant of key with token, and its handle.
func (h *handles) find(key string, token uint64) (string, leasehold.Grant, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	id, ok := h.index[grantID{key, token}]
	if !ok {
		return "", leasehold.Grant{}, false
	}
	return id, h.m[id].g, true
}
