package zookeeper

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/sessionpool"
)

// Subscribe watches key's queue and signals the returned channel when a
// node leaves it (a release, an expiry, a waiter leaving): the key may
// have become free. It returns once the first watch is set on the server,
// so a release after Subscribe returns is never missed. The channel is
// also signalled when the watch ends (the session lost, the store closed);
// the client's backoff covers that.
func (s *Store) Subscribe(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return s.signalOn(ctx, key, "subscribe", true)
}

// Watch implements leasehold.Watcher: it watches key's queue and signals
// the returned channel on every change of it (a grant, a release, an
// expiry, a waiter joining or leaving), so an observer of the key's holder
// never misses one. Like Subscribe, it returns once the watch is set, and
// signals when the watch ends.
func (s *Store) Watch(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return s.signalOn(ctx, key, "watch", false)
}

// signalOn watches key's queue with ZooKeeper's one-shot watches, set again
// after each event, and signals the returned channel on a departure from
// the queue (leaves) or on any change.
func (s *Store) signalOn(ctx context.Context, key, op string, leaves bool) (<-chan struct{}, func(), error) {
	if err := leasehold.CheckHolder(key); err != nil {
		return nil, nil, err
	}
	if s.sessions.Closed() {
		return nil, nil, s.closedErr(op)
	}
	ss, err := s.anySession(ctx)
	if err != nil {
		return nil, nil, err
	}
	parent := s.ParentOf(key)
	names, ev, err := s.arm(ctx, ss, parent)
	if err != nil {
		ss.Drop()
		return nil, nil, s.storeErr(ctx, op, parent, err)
	}
	out := make(chan struct{}, 1)
	stop := make(chan struct{})
	done := make(chan struct{})
	s.sessions.Go(func() {
		defer close(done)
		defer sessionpool.Signal(out)
		for {
			select {
			case <-ev:
			case <-stop:
				return
			case <-ss.Done():
				return
			case <-s.sessions.Ctx().Done():
				return
			}
			actx, cancel := context.WithTimeout(s.sessions.Ctx(), 10*time.Second)
			now, next, err := s.arm(actx, ss, parent)
			cancel()
			if err != nil {
				return
			}
			if !leaves || departed(names, now) {
				sessionpool.Signal(out)
			}
			names, ev = now, next
		}
	})
	return out, sync.OnceFunc(func() {
		close(stop)
		<-done
		ss.Drop()
	}), nil
}

// arm reads the children of parent and sets a watch on them, or on
// parent's creation if it does not exist.
func (s *Store) arm(ctx context.Context, ss *session, parent string) ([]string, <-chan zk.Event, error) {
	for {
		var (
			kids []string
			ch   <-chan zk.Event
		)
		// On an error the call may still be running (ctx ended first) and
		// writing kids and ch: they are read only after a success.
		err := ss.call(ctx, func() (err error) { kids, _, ch, err = ss.conn.ChildrenW(parent); return err })
		if err == nil {
			return kids, ch, nil
		}
		if !errors.Is(err, zk.ErrNoNode) {
			return nil, nil, err
		}
		var exists bool
		err = ss.call(ctx, func() (err error) { exists, _, ch, err = ss.conn.ExistsW(parent); return err })
		if err != nil {
			return nil, nil, err
		}
		if !exists {
			return nil, ch, nil
		}
	}
}

// departed reports whether a name of before is missing from now.
func departed(before, now []string) bool {
	for _, n := range before {
		if !slices.Contains(now, n) {
			return true
		}
	}
	return false
}
