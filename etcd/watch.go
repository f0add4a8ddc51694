package etcd

import (
	"context"
	"errors"
	"time"

	"github.com/leasehold-go/leasehold"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// The watches of Subscribe and AcquireWait. Each watch's goroutine is
// counted in the Store's wg and ends when the Store closes.

// drain reads wch until the watcher closes it.
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
	wctx, cancel, err := s.sessions.WatchContext(ctx, "watch")
	if err != nil {
		return nil, err
	}
	w := &watch{s: s, key: key, cancel: cancel,
		ch: s.cli.Watch(clientv3.WithRequireLeader(wctx), key, clientv3.WithFilterPut(), clientv3.WithCreatedNotify())}
	if err := awaitCreated(ctx, w.ch); err != nil {
		w.stop()
		if s.sessions.Closed() {
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
	w.s.sessions.Done()
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
				if s.sessions.Closed() {
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
		case <-ss.Done():
			return &leasehold.StoreError{Store: Name, Op: "acquire", Err: ErrSessionLost}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
