package etcd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/leasehold-go/leasehold"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Subscribe watches key's holder and waiter keys and signals the returned
// channel when one is deleted (a release, an expiry, or a waiter leaving the
// queue): the key may have become free. It returns once the watch is
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
	wch := s.cli.Watch(clientv3.WithRequireLeader(wctx), s.prefix+escapeKey(key)+"/",
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
// The first transaction either acquires the free key (as Acquire) or, in the
// same round trip, queues the caller: it puts a waiter key under the
// per-key waiter prefix, on the session's etcd lease. Waiters are served in
// the order of their waiter keys' CreateRevision: each watches the waiter
// just before it (as etcd's concurrency.Mutex does) and, once first in
// line, the holder key; the head's acquire transaction deletes its waiter
// key and creates the holder key atomically, and succeeds only if no earlier
// waiter remains. Acquire does not jump the queue (it fails while waiters
// are queued), so waiting through AcquireWait is FIFO.
//
// A waiter whose context ends removes its waiter key (or has housekeeping
// remove it); a waiter whose process dies leaves the queue when its session
// lease expires.
func (s *Store) AcquireWait(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	if err := leasehold.ValidateKey(req.Key); err != nil {
		return leasehold.Grant{}, err
	}
	if err := leasehold.ValidateTTL(req.TTL, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	class := classOf(req.TTL)
	for attempt := 0; ; attempt++ {
		ss, err := s.use(ctx, class)
		if err != nil {
			return leasehold.Grant{}, err
		}
		g, err := s.acquireWaitOn(ctx, ss, req)
		s.unuse(ss)
		if errors.Is(err, errLeaseGone) {
			if attempt == 0 {
				continue
			}
			err = &leasehold.StoreError{Store: Name, Op: "acquire", Err: ErrSessionLost}
		}
		return g, err
	}
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (s *Store) acquireWaitOn(ctx context.Context, ss *session, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	name := s.HolderKey(req.Key)
	val := encodeValue(req.Owner, req.Label)
	wpfx := waitersPrefix(s.prefix, req.Key)
	wname := wpfx + randomID()
	rctx := clientv3.WithRequireLeader(ctx)

	s.mu.Lock()
	ss.inflight[name]++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if ss.inflight[name]--; ss.inflight[name] <= 0 {
			delete(ss.inflight, name)
		}
		s.mu.Unlock()
	}()
	addOrphan := func(o orphan) {
		s.mu.Lock()
		if !ss.gone {
			ss.orphans = append(ss.orphans, o)
		}
		s.mu.Unlock()
	}
	lostErr := func() error {
		if s.isClosed() {
			return s.closedErr("acquire")
		}
		return &leasehold.StoreError{Store: Name, Op: "acquire", Err: ErrSessionLost}
	}

	// Acquire the free key, or queue up, in one round trip.
	t0 := time.Now()
	resp, err := s.cli.Txn(rctx).
		If(clientv3.Compare(clientv3.CreateRevision(name), "=", 0),
			clientv3.Compare(clientv3.CreateRevision(wpfx), "=", 0).WithPrefix()).
		Then(clientv3.OpPut(name, val, clientv3.WithLease(ss.id))).
		Else(clientv3.OpPut(wname, val, clientv3.WithLease(ss.id))).
		Commit()
	if err != nil {
		if isLeaseNotFound(err) {
			ss.markLost()
			return leasehold.Grant{}, errLeaseGone
		}
		addOrphan(orphan{name: name, value: val})
		addOrphan(orphan{name: wname, uncond: true})
		return leasehold.Grant{}, s.storeErrOn(ctx, "acquire", err)
	}
	if resp.Succeeded {
		return s.granted(ss, req, name, resp.Header.Revision, t0)
	}
	myRev := resp.Header.Revision
	queued := true
	defer func() {
		if !queued {
			return
		}
		dctx, cancel := context.WithTimeout(s.ctx, 2*time.Second)
		defer cancel()
		if _, err := s.cli.Delete(dctx, wname); err != nil {
			addOrphan(orphan{name: wname, uncond: true})
		}
	}()

	// Wait for our turn. A read (no raft write) tells whom to watch; after
	// the holder's delete the acquire transaction is tried at once, and its
	// Else branch answers the same reads if it fails.
	gets := []clientv3.Op{
		clientv3.OpGet(name),
		clientv3.OpGet(wname, clientv3.WithKeysOnly()),
		clientv3.OpGet(wpfx, append(clientv3.WithLastCreate(), clientv3.WithMaxCreateRev(myRev-1), clientv3.WithKeysOnly())...),
	}
	try := false // whether to send the acquire transaction next
	for {
		if try {
			t0 = time.Now()
			resp, err = s.cli.Txn(rctx).
				If(clientv3.Compare(clientv3.CreateRevision(name), "=", 0),
					clientv3.Compare(clientv3.CreateRevision(wname), "=", myRev),
					clientv3.Compare(clientv3.CreateRevision(wpfx), ">", myRev-1).WithPrefix()).
				Then(clientv3.OpPut(name, val, clientv3.WithLease(ss.id)), clientv3.OpDelete(wname)).
				Else(gets...).
				Commit()
		} else {
			resp, err = s.cli.Txn(rctx).Then(gets...).Commit()
		}
		if err != nil {
			if isLeaseNotFound(err) {
				ss.markLost()
				return leasehold.Grant{}, lostErr()
			}
			if try {
				addOrphan(orphan{name: name, value: val})
			}
			return leasehold.Grant{}, s.storeErrOn(ctx, "acquire", err)
		}
		if try && resp.Succeeded {
			queued = false
			return s.granted(ss, req, name, resp.Header.Revision, t0)
		}
		holder := resp.Responses[0].GetResponseRange().GetKvs()
		mine := resp.Responses[1].GetResponseRange().GetKvs()
		before := resp.Responses[2].GetResponseRange().GetKvs()
		if len(mine) == 0 {
			// Our waiter key is gone: its lease expired or was revoked.
			ss.markLost()
			return leasehold.Grant{}, lostErr()
		}
		var watch string
		switch {
		case len(before) > 0:
			watch, try = string(before[0].Key), false
		case len(holder) > 0:
			watch, try = name, true
		default:
			try = true // our turn, and the key is free
			continue
		}
		if err := s.waitDelete(ctx, ss, watch, resp.Header.Revision); err != nil {
			return leasehold.Grant{}, err
		}
	}
}

// granted records a grant won by a transaction at revision rev.
func (s *Store) granted(ss *session, req leasehold.AcquireRequest, name string, rev int64, t0 time.Time) (leasehold.Grant, error) {
	ttl, ok := ss.track(name, rev, t0)
	if !ok {
		s.deleteToken(name, rev)
		return leasehold.Grant{}, &leasehold.StoreError{Store: Name, Op: "acquire", Err: ErrSessionLost}
	}
	return leasehold.Grant{
		Key: req.Key, Owner: req.Owner, Label: req.Label,
		Token:   uint64(rev),
		TTL:     ttl,
		Lost:    ss.lost,
		Private: &grantRef{store: s, sess: ss},
	}, nil
}

// waitDelete waits until key is deleted after revision rev, the watch ends
// (the caller re-checks), the session is lost, or ctx ends.
func (s *Store) waitDelete(ctx context.Context, ss *session, key string, rev int64) error {
	wctx, cancel, err := s.watchContext(ctx)
	if err != nil {
		return err
	}
	defer s.wg.Done()
	defer cancel()
	wch := s.cli.Watch(clientv3.WithRequireLeader(wctx), key, clientv3.WithRev(rev+1), clientv3.WithFilterPut())
	defer func() {
		cancel()
		drain(wch)
	}()
	for {
		select {
		case resp, ok := <-wch:
			if !ok || resp.Err() != nil {
				if err := ctx.Err(); err != nil {
					return err
				}
				if s.isClosed() {
					return s.closedErr("acquire")
				}
				if resp.Err() != nil && !errors.Is(resp.Err(), context.Canceled) {
					// A compaction or a lost leader: re-check at once, but
					// do not spin if the cluster keeps refusing.
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
