package sqlite

import (
	"context"
	"hash/fnv"
	"slices"
	"sync"

	"github.com/leasehold-go/leasehold"
)

// wakeBuckets is the number of files in the wake directory. A key belongs to
// one bucket (a hash of the key), and a release is announced to its key's
// bucket: with 256 buckets a release wakes a waiter for another key about
// once in 256 releases, and that waiter only makes one extra acquire
// attempt.
const wakeBuckets = 256

// wakeDirSuffix names the wake directory beside the database file.
const wakeDirSuffix = "-wake"

// bucketOf returns key's bucket.
func bucketOf(key string) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % wakeBuckets)
}

// bucketName is the name of bucket b's file in the wake directory: two hex
// digits.
func bucketName(b int) string {
	const hex = "0123456789abcdef"
	return string([]byte{hex[b>>4], hex[b&0xf]})
}

// parseBucket is the inverse of bucketName; ok is false for any other name.
func parseBucket(name string) (b int, ok bool) {
	if len(name) != 2 {
		return 0, false
	}
	for _, c := range []byte(name) {
		switch {
		case c >= '0' && c <= '9':
			b = b<<4 | int(c-'0')
		case c >= 'a' && c <= 'f':
			b = b<<4 | int(c-'a'+10)
		default:
			return 0, false
		}
	}
	return b, true
}

// waker delivers the store's release notifications to its subscribers. Its
// watch (wake_linux.go; nothing elsewhere) turns releases made by any
// process into calls of signal; every wake-up is a hint, and a lost one
// only leaves a waiter to its backoff.
type waker struct {
	dir string // the wake directory: the database path + wakeDirSuffix

	mu     sync.Mutex
	subs   map[int]map[string][]*wakeSub // by bucket, then key; oldest first
	watch  *watch                        // nil until the first Subscribe, or after it failed
	closed bool
}

// wakeSub is one subscription: its channel holds at most one wake-up.
type wakeSub struct {
	ch chan struct{}
}

func newWaker(dbPath string) *waker {
	return &waker{dir: dbPath + wakeDirSuffix, subs: make(map[int]map[string][]*wakeSub)}
}

// Subscribe returns a channel that receives a value (non-blocking, coalesced)
// when key may have become free: its holder released it, in this or another
// process that shares the file (two releases of keys of one bucket in quick
// succession may reach a watch as one wake-up: inotify merges identical
// events that were not read yet). A release wakes one subscriber of the key per
// Store, the oldest that has no wake-up pending, rather than all of them: only
// one can win the key, and every attempt is a write transaction that the others
// would queue behind; the rest keep to their backoff until a later release. A
// subscriber that ends its subscription with a wake-up unread passes it on to
// the next. Expiry sends nothing: a waiter learns the holder's remaining time
// from the *leasehold.HeldError and tries again then. On Linux one inotify
// watch per Store, on the wake directory beside the file, carries releases
// between processes; where that watch cannot be set up (other systems, the
// inotify limits reached) only releases made through this Store send, and
// waiters in other processes rely on their backoff. Subscribe fails only when
// the store is closed or ctx has ended.
func (s *Store) Subscribe(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	if err := leasehold.CheckHolder(key); err != nil {
		return nil, nil, err
	}
	if err := s.checkOpen(ctx, "subscribe"); err != nil {
		return nil, nil, err
	}
	sub := &wakeSub{ch: make(chan struct{}, 1)}
	b := bucketOf(key)
	w := s.wake
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, nil, &leasehold.StoreError{Store: name, Op: "subscribe", Err: leasehold.ErrClosed}
	}
	if w.watch == nil {
		// The watch is in place before Subscribe returns, so a release
		// after it (the client's next attempt fails first) is seen.
		w.watch, _ = startWatch(w) // nil on failure: a hint lost, not an error
	}
	if w.subs[b] == nil {
		w.subs[b] = make(map[string][]*wakeSub)
	}
	w.subs[b][key] = append(w.subs[b][key], sub)
	var once sync.Once
	unsubscribe := func() { once.Do(func() { w.remove(b, key, sub) }) }
	return sub.ch, unsubscribe, nil
}

// remove ends sub's subscription to key. A wake-up that sub never read goes
// to the next subscriber of key, which may win the key in its place.
func (w *waker) remove(b int, key string, sub *wakeSub) {
	w.mu.Lock()
	defer w.mu.Unlock()
	subs := w.subs[b][key]
	i := slices.Index(subs, sub)
	if i < 0 {
		return
	}
	subs = slices.Delete(subs, i, i+1)
	switch {
	case len(subs) > 0:
		w.subs[b][key] = subs
	case len(w.subs[b]) == 1:
		delete(w.subs, b)
	default:
		delete(w.subs[b], key)
	}
	select {
	case <-sub.ch:
		wakeOne(subs)
	default:
	}
}

// released announces, after the commit, that key was released: it touches
// the key's bucket file, which every watch on the directory (in this and
// other processes) reports. Without a watch of its own the Store wakes its
// own subscribers directly.
func (w *waker) released(key string) {
	b := bucketOf(key)
	announce(w.dir, b)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.watch == nil {
		w.signalLocked(b)
	}
}

// signal wakes one subscriber of each key in bucket b.
func (w *waker) signal(b int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.signalLocked(b)
}

func (w *waker) signalLocked(b int) {
	for _, subs := range w.subs[b] {
		wakeOne(subs)
	}
}

// wakeOne wakes the oldest of subs that has no wake-up pending; if all have
// one, each of them will try again anyway.
func wakeOne(subs []*wakeSub) {
	for _, sub := range subs {
		if len(sub.ch) == 0 {
			notify(sub.ch)
			return
		}
	}
}

// signalAll wakes every subscriber: some notifications may have been lost.
func (w *waker) signalAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, keys := range w.subs {
		for _, subs := range keys {
			for _, sub := range subs {
				notify(sub.ch)
			}
		}
	}
}

// lost is called by a watch that stopped on its own (its directory was
// removed, a read failed). While there are subscribers it starts a new
// watch (recreating the directory), then wakes every subscriber, since
// releases between the two watches went unseen. If the new watch cannot
// start, the next Subscribe tries again.
func (w *waker) lost(wt *watch) {
	w.mu.Lock()
	if w.watch == wt {
		w.watch = nil
		if !w.closed && len(w.subs) > 0 {
			w.watch, _ = startWatch(w)
		}
	}
	w.mu.Unlock()
	w.signalAll()
}

// close stops the watch and waits for its goroutine. Subscription channels
// are left open: a closed one would read as an endless stream of wake-ups.
func (w *waker) close() {
	w.mu.Lock()
	w.closed = true
	wt := w.watch
	w.watch = nil
	w.mu.Unlock()
	if wt != nil {
		wt.stop()
	}
}

func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
