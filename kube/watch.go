package kube

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/leasehold-go/leasehold"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// Subscribe watches key's Lease (the watch API, one object by name) and
// signals every change of it: a release, a takeover, a renewal, a delete.
// It returns once the server accepted the watch, so a change after it
// returns is not missed; the channel also receives a value when the watch
// ends on its own (the server closed it). A lease that merely expires
// changes nothing on the server, so no event tells of it: the client's
// backoff finds it.
func (s *Store) Subscribe(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return s.watch(ctx, "subscribe", key)
}

// Watch is Subscribe, for observers (leasehold.Watcher).
func (s *Store) Watch(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return s.watch(ctx, "watch", key)
}

func (s *Store) watch(ctx context.Context, op, key string) (<-chan struct{}, func(), error) {
	if err := leasehold.CheckHolder(key); err != nil {
		return nil, nil, err
	}
	if err := s.checkOpen(op); err != nil {
		return nil, nil, err
	}
	name := objectName(key)
	wctx, cancel := context.WithCancel(ctx)
	w, err := s.leases.Watch(wctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		cancel()
		return nil, nil, s.err(ctx, op, name, err)
	}
	ch := make(chan struct{}, 1)
	signal := func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		defer signal()
		for {
			select {
			case _, ok := <-w.ResultChan():
				if !ok {
					return
				}
				signal()
			case <-wctx.Done():
				return
			}
		}
	})
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			w.Stop()
			wg.Wait()
		})
	}
	return ch, stop, nil
}

// List returns the holders of the store's Leases whose keys start with
// prefix: the Leases the store's label selects, held, and not seen
// unchanged for their TTL by this store. A Lease with the label that is
// not the store's record is refused, naming it.
func (s *Store) List(ctx context.Context, prefix string) ([]leasehold.Holder, error) {
	if err := s.checkOpen("list"); err != nil {
		return nil, err
	}
	var hs []leasehold.Holder
	opts := metav1.ListOptions{LabelSelector: labelOwner + "=" + labelValue, Limit: 500}
	for {
		l, err := s.leases.List(ctx, opts)
		if err != nil {
			return nil, s.err(ctx, "list", "(all, label "+opts.LabelSelector+")", err)
		}
		now := time.Now()
		for i := range l.Items {
			it := &l.Items[i]
			key := it.Annotations[annKey]
			if !strings.HasPrefix(key, prefix) {
				continue
			}
			rec, err := parseRecord(s.where(it.Name), key, it.ResourceVersion, it.Annotations)
			if err == nil && it.Name != objectName(key) {
				err = foreign(s.where(it.Name), "its key %q belongs at Lease %s", clip(key), objectName(key))
			}
			if err != nil {
				return nil, s.err(ctx, "list", it.Name, err)
			}
			if !rec.Held {
				continue
			}
			if rem := s.obs.remaining(it.Name, it.ResourceVersion, rec.TTL, now); rem > 0 {
				hs = append(hs, leasehold.Holder{Key: key, Label: rec.Label, Token: rec.Token, Remaining: rem})
			}
		}
		if l.Continue == "" {
			return hs, nil
		}
		opts.Continue = l.Continue
	}
}
