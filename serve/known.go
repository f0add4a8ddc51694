package serve

import (
	"sync"
	"time"

	"github.com/leasehold-go/leasehold"
)

// known remembers the owner ids of the portable grants acquired or renewed
// through this server (the grants it keeps are in handles), so that an
// admin can break them: the Store contract releases a grant by its owner
// id and token only. An entry is forgotten when its grant is released
// through the server, or once its TTL passed without a renewal through
// the server (it may have been renewed elsewhere: then the server cannot
// break it). It is not lease state: losing it loses only the power to
// break.
type known struct {
	mu sync.Mutex
	m  map[grantID]knownGrant
}

type knownGrant struct {
	owner   string
	expires time.Time
}

func newKnown() *known { return &known{m: make(map[grantID]knownGrant)} }

// put remembers g until its TTL ends, measured from now.
func (k *known) put(g leasehold.Grant, now time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.m[grantID{g.Key, g.Token}] = knownGrant{owner: g.Owner, expires: now.Add(g.TTL)}
}

// get returns the grant of key with token, if its owner is known.
func (k *known) get(key string, token uint64) (leasehold.Grant, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	e, ok := k.m[grantID{key, token}]
	return leasehold.Grant{Key: key, Owner: e.owner, Token: token}, ok
}

// forget drops the grant of key with token.
func (k *known) forget(key string, token uint64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.m, grantID{key, token})
}

// expire drops the grants whose TTL ended before now.
func (k *known) expire(now time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for id, e := range k.m {
		if now.After(e.expires) {
			delete(k.m, id)
		}
	}
}
