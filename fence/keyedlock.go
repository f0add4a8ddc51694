package fence

import (
	"context"
	"sync"
)

// keyedLock is a set of mutexes, one per key, created on first use and
// dropped when nobody holds or waits for them. Waiting honours a context.
type keyedLock struct {
	mu    sync.Mutex
	locks map[string]*keyLock
}

type keyLock struct {
	ch   chan struct{} // holds one value while the lock is taken
	refs int           // holders plus waiters
}

// lock takes the lock for key, or returns ctx.Err() if ctx ends first. On
// success the caller must call the returned unlock function exactly once.
func (k *keyedLock) lock(ctx context.Context, key string) (unlock func(), err error) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = make(map[string]*keyLock)
	}
	l := k.locks[key]
	if l == nil {
		l = &keyLock{ch: make(chan struct{}, 1)}
		k.locks[key] = l
	}
	l.refs++
	k.mu.Unlock()

	unlock = func() {
		<-l.ch
		k.release(key, l)
	}
	select {
	case l.ch <- struct{}{}: // free: take it even if ctx has ended
		return unlock, nil
	default:
	}
	select {
	case l.ch <- struct{}{}:
		return unlock, nil
	case <-ctx.Done():
		k.release(key, l)
		return nil, ctx.Err()
	}
}

// release drops one reference to key's lock and forgets the lock when
// nobody holds or waits for it.
func (k *keyedLock) release(key string, l *keyLock) {
	k.mu.Lock()
	defer k.mu.Unlock()
	l.refs--
	if l.refs == 0 {
		delete(k.locks, key)
	}
}

// users returns the number of holders plus waiters for key (for tests).
func (k *keyedLock) users(key string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	if l := k.locks[key]; l != nil {
		return l.refs
	}
	return 0
}
