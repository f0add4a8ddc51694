package etcd

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/leasehold-go/leasehold"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Subscribe watches key's queue and signals the returned channel when an
// entry is deleted (a release, an expiry, or a waiter leaving the queue):
// the key may have become free. It returns once the watch is
// established on the server, so a release after Subscribe returns is never
// missed. The channel is also signalled if the watch ends (compaction,
// cluster trouble, Close); the client's backoff covers that.
func (s *Store) Subscribe(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	if err := leasehold.ValidateKey(key); err != nil {
		return nil, nil, err
	}
	wctx, cancel, err := s.watchContext(ctx)
	if err != nil {
		return nil, nil, err
	}
	wch := s.cli.Watch(clientv3.WithRequireLeader(wctx), QueuePrefix(s.prefix, key),
		clientv3.WithPrefix(), clientv3.WithFilterPut(), clientv3.WithCreatedNotify())
	if err := awaitCreated(ctx, wch); err != nil {
		cancel()
		drain(wch)
		s.wg.Done()
		return nil, nil, s.storeErrOn(ctx, "subscribe", err)
	}
	ch := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer s.wg.Done()
		defer close(done)
		defer signal(ch)
		for resp := range wch {
			if len(resp.Events) > 0 || resp.Err() != nil {
				signal(ch)
			}
		}
	}()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}, nil
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func drain(wch clientv3.WatchChan) {
	for range wch { //nolint:revive // drain until the watcher closes
	}
}

// awaitCreated waits for the watch's created notification.
func awaitCreated(ctx context.Context, wch clientv3.WatchChan) error {
	select {
	case resp, ok := <-wch:
		if !ok {
			if err := ctx.Err(); err != nil {
				return err
			}
			return errors.New("watch closed before it was created")
		}
		if err := resp.Err(); err != nil {
			return err
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// watchContext returns a context for a watch goroutine that also ends when
// the store closes, with the goroutine counted in s.wg (the caller calls
// s.wg.Done when it ends).
func (s *Store) watchContext(ctx context.Context) (context.Context, context.CancelFunc, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, s.closedErr("watch")
	}
	wctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.ctx, cancel)
	s.wg.Add(1)
	return wctx, func() { stop(); cancel() }, nil
}

// AcquireWait acquires req.Key, waiting in a FIFO queue while it is held.
//
// One transaction puts the caller's entry in the key's queue (on the
// session's etcd lease) and reads the queue's oldest entry: if that is the
// new entry, the key is the caller's, in one round trip. Otherwise the
// caller waits for the entry created just before its own to be deleted (as
// etcd's concurrency.Mutex does), until no older entry remains: the entry
// then holds the key, and its CreateRevision is the token. Acquire never
// jumps the queue (it succeeds only on an empty queue), so waiting is FIFO.
//
// Watches are opened at the current revision and confirmed by a read, so
// etcd delivers the wake-up at once (a watch that starts at a past revision
// waits for etcd's 100 ms catch-up loop). A waiter whose context ends
// removes its entry (or has housekeeping remove it); a waiter whose process
// dies leaves the queue when its session lease expires. An owner id that
// already holds or waits for the key gets a *HeldError.
func (s *Store) AcquireWait(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	return s.onSession(ctx, req, s.acquireWaitOn)
}

func (s *Store) acquireWaitOn(ctx context.Context, ss *session, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	name := s.EntryKey(req.Key, req.Owner)
	qpfx := QueuePrefix(s.prefix, req.Key)
	rctx := clientv3.WithRequireLeader(ctx)
	defer ss.begin(name)()
	lostErr := func() error {
		if s.isClosed() {
			return s.closedErr("acquire")
		}
		return &leasehold.StoreError{Store: Name, Op: "acquire", Err: ErrSessionLost}
	}

	// Join the queue, and learn whether we head it, in one round trip.
	t0, err := ss.fresh(ctx, "acquire")
	if err != nil {
		return leasehold.Grant{}, err
	}
	resp, err := s.cli.Txn(rctx).
		If(clientv3.Compare(clientv3.CreateRevision(name), "=", 0)).
		Then(clientv3.OpPut(name, encodeValue(req.Label), clientv3.WithLease(ss.id)),
			clientv3.OpGet(qpfx, append(clientv3.WithFirstCreate(), clientv3.WithKeysOnly())...)).
		Else(clientv3.OpGet(qpfx, clientv3.WithFirstCreate()...)).
		Commit()
	if err != nil {
		return leasehold.Grant{}, s.acquireFailed(ctx, ss, name, err)
	}
	if !resp.Succeeded {
		return leasehold.Grant{}, heldError(req.Key, resp.Responses[0]) // this owner id is already queued
	}
	myRev := resp.Header.Revision
	if kvs := resp.Responses[1].GetResponseRange().GetKvs(); len(kvs) > 0 && kvs[0].CreateRevision == myRev {
		return s.granted(ss, req, name, myRev, t0)
	}
	granted := false
	defer func() {
		if granted {
			return
		}
		dctx, cancel := context.WithTimeout(s.ctx, 2*time.Second)
		defer cancel()
		if _, err := s.cli.Txn(dctx).
			If(clientv3.Compare(clientv3.CreateRevision(name), "=", myRev)).
			Then(clientv3.OpDelete(name)).Commit(); err != nil {
			ss.addOrphan(orphan{name: name, token: myRev})
		}
	}()

	var w *watch // on the entry we wait for
	defer func() { w.stop() }()
	for {
		// Which entry, if any, was created just before ours and is still here?
		t0, err = ss.fresh(ctx, "acquire")
		if err != nil {
			return leasehold.Grant{}, err
		}
		resp, err := s.cli.Txn(rctx).Then(
			clientv3.OpGet(qpfx, append(clientv3.WithLastCreate(), clientv3.WithMaxCreateRev(myRev-1), clientv3.WithKeysOnly())...),
			clientv3.OpGet(name, clientv3.WithKeysOnly()),
		).Commit()
		if err != nil {
			return leasehold.Grant{}, s.storeErrOn(ctx, "acquire", err)
		}
		if mine := resp.Responses[1].GetResponseRange().GetKvs(); len(mine) == 0 || mine[0].CreateRevision != myRev {
			// Our entry is gone: its lease expired or was revoked.
			ss.markLost()
			return leasehold.Grant{}, lostErr()
		}
		before := resp.Responses[0].GetResponseRange().GetKvs()
		if len(before) == 0 {
			granted = true
			return s.granted(ss, req, name, myRev, t0)
		}
		pred := string(before[0].Key)
		if w == nil || w.key != pred {
			// Watch the new predecessor from now, then read again: a delete
			// between the read and the watch's start is seen by the read.
			w.stop()
			if w, err = s.watchDeletes(ctx, pred); err != nil {
				return leasehold.Grant{}, err
			}
			continue
		}
		if err := w.wait(ctx, ss); err != nil {
			return leasehold.Grant{}, err
		}
	}
}

// watch is a watch for deletes of one key, opened at the current revision.
type watch struct {
	s      *Store
	key    string
	ch     clientv3.WatchChan
	cancel context.CancelFunc
}

// watchDeletes opens a watch for deletes of key and waits until etcd has
// created it.
func (s *Store) watchDeletes(ctx context.Context, key string) (*watch, error) {
	wctx, cancel, err := s.watchContext(ctx)
	if err != nil {
		return nil, err
	}
	w := &watch{s: s, key: key, cancel: cancel,
		ch: s.cli.Watch(clientv3.WithRequireLeader(wctx), key, clientv3.WithFilterPut(), clientv3.WithCreatedNotify())}
	if err := awaitCreated(ctx, w.ch); err != nil {
		w.stop()
		if s.isClosed() {
			return nil, s.closedErr("acquire")
		}
		return nil, s.storeErrOn(ctx, "acquire", err)
	}
	return w, nil
}

// stop ends the watch. A nil watch is fine.
func (w *watch) stop() {
	if w == nil || w.cancel == nil {
		return
	}
	w.cancel()
	drain(w.ch)
	w.cancel = nil
	w.s.wg.Done()
}

// wait waits for a delete of the watched key, the end of the watch (the
// caller re-checks, after a pause if etcd refused it), the session's loss,
// or the end of ctx.
func (w *watch) wait(ctx context.Context, ss *session) error {
	s := w.s
	for {
		select {
		case resp, ok := <-w.ch:
			if !ok || resp.Err() != nil {
				if err := ctx.Err(); err != nil {
					return err
				}
				if s.isClosed() {
					return s.closedErr("acquire")
				}
				w.stop()
				w.key = "" // re-open on the next round
				if ok && !errors.Is(resp.Err(), context.Canceled) {
					select {
					case <-time.After(50 * time.Millisecond):
					case <-ctx.Done():
						return ctx.Err()
					}
				}
				return nil
			}
			for _, ev := range resp.Events {
				if ev.Type == mvccpb.DELETE {
					return nil
				}
			}
		case <-ss.lost:
			return &leasehold.StoreError{Store: Name, Op: "acquire", Err: ErrSessionLost}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
