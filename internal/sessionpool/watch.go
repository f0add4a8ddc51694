package sessionpool

import (
	"context"
	"sync"
)

// The goroutines of a store's watches (Subscribe, Watch, an acquire's wait)
// are counted like its sessions', so that Shut waits for them.

// WatchContext returns a context for a watch goroutine that ends with ctx,
// with its cancel, or when the store closes, with the goroutine counted
// (it calls Done when it ends; Follow does). The count is taken under the
// pool's mutex: either Shut waits for the goroutine, or WatchContext sees
// the store closed and returns the closed error of op.
func (p *Pool[S]) WatchContext(ctx context.Context, op string) (context.Context, context.CancelFunc, error) {
	if !p.WhileOpen(func() { p.wg.Add(1) }) {
		return nil, nil, p.closedErr(op)
	}
	wctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(p.ctx, cancel)
	return wctx, func() { stop(); cancel() }, nil
}

// Follow runs follow, the body of a watch goroutine counted by
// WatchContext, on a goroutine that signals the returned channel
// (capacity one) once more when follow returns, then calls Done. follow
// signals ch on each change it sees. The returned stop calls cancel (the
// watch context's) and waits for follow to return; it may be called more
// than once.
func (p *Pool[S]) Follow(cancel func(), follow func(ch chan struct{})) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer p.wg.Done()
		defer close(done)
		defer Signal(ch)
		follow(ch)
	}()
	return ch, sync.OnceFunc(func() {
		cancel()
		<-done
	})
}
