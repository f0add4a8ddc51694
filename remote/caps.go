package remote

import (
	"context"

	"github.com/leasehold-go/leasehold"
)

// The capabilities a server may offer over its backend, added to a *Store
// by the type Open returns: one type per combination, since a client finds
// capabilities by type assertion and a method must not exist that only
// fails.
type (
	listing               struct{ *Store }
	watching              struct{ *Store }
	listWatching          struct{ *Store }
	queueing              struct{ *Store }
	listQueueing          struct{ *Store }
	watchQueueing         struct{ *Store }
	listWatchQueueing     struct{ *Store }
	capsKey               struct{ list, watch, queue bool }
	capabilityConstructor func(*Store) leasehold.Store
)

var (
	_ leasehold.Lister  = listWatchQueueing{}
	_ leasehold.Watcher = listWatchQueueing{}
	_ leasehold.Waiter  = listWatchQueueing{}
)

// withCaps returns s inside the type with the capabilities its server
// reported.
func withCaps(s *Store) leasehold.Store {
	types := map[capsKey]capabilityConstructor{
		{}:                                     func(s *Store) leasehold.Store { return s },
		{list: true}:                           func(s *Store) leasehold.Store { return listing{s} },
		{watch: true}:                          func(s *Store) leasehold.Store { return watching{s} },
		{list: true, watch: true}:              func(s *Store) leasehold.Store { return listWatching{s} },
		{queue: true}:                          func(s *Store) leasehold.Store { return queueing{s} },
		{list: true, queue: true}:              func(s *Store) leasehold.Store { return listQueueing{s} },
		{watch: true, queue: true}:             func(s *Store) leasehold.Store { return watchQueueing{s} },
		{list: true, watch: true, queue: true}: func(s *Store) leasehold.Store { return listWatchQueueing{s} },
	}
	return types[capsKey{list: s.caps.List, watch: s.caps.Watch, queue: s.caps.Queue}](s)
}

// List lists the holders of keys with prefix.
func (s listing) List(ctx context.Context, prefix string) ([]leasehold.Holder, error) {
	return s.list(ctx, prefix)
}

// Watch signals every change of key's holder.
func (s watching) Watch(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return s.watch(ctx, key, "watch")
}

// List lists the holders of keys with prefix.
func (s listWatching) List(ctx context.Context, prefix string) ([]leasehold.Holder, error) {
	return s.list(ctx, prefix)
}

// Watch signals every change of key's holder.
func (s listWatching) Watch(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return s.watch(ctx, key, "watch")
}

// AcquireWait waits for req.Key in the backend's queue.
func (s queueing) AcquireWait(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	return s.acquireWait(ctx, req)
}

// List lists the holders of keys with prefix.
func (s listQueueing) List(ctx context.Context, prefix string) ([]leasehold.Holder, error) {
	return s.list(ctx, prefix)
}

// AcquireWait waits for req.Key in the backend's queue.
func (s listQueueing) AcquireWait(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	return s.acquireWait(ctx, req)
}

// Watch signals every change of key's holder.
func (s watchQueueing) Watch(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return s.watch(ctx, key, "watch")
}

// AcquireWait waits for req.Key in the backend's queue.
func (s watchQueueing) AcquireWait(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	return s.acquireWait(ctx, req)
}

// List lists the holders of keys with prefix.
func (s listWatchQueueing) List(ctx context.Context, prefix string) ([]leasehold.Holder, error) {
	return s.list(ctx, prefix)
}

// Watch signals every change of key's holder.
func (s listWatchQueueing) Watch(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return s.watch(ctx, key, "watch")
}

// AcquireWait waits for req.Key in the backend's queue.
func (s listWatchQueueing) AcquireWait(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	return s.acquireWait(ctx, req)
}
