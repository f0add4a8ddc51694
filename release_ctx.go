package leasehold

import (
	"context"
	"time"
)

// A release runs on a context detached from the caller's and bounded by
// ReleaseTimeout. A context of its own per release (context.WithTimeout)
// costs four allocations and a runtime timer set and stopped; with many
// goroutines acquiring and releasing, the client and the store's server
// share the cores, and that work is a part of every cycle (redis/bench
// BenchmarkCPU64). So the releases of a client share a deadline context:
// a release uses the current one while its deadline is between
// ReleaseTimeout*63/64 and ReleaseTimeout away, and otherwise makes the
// next one, ReleaseTimeout away (at most about 64 per ReleaseTimeout).
// Each ends by its own timer; none outlives its deadline.

// sharedDeadline is one deadline context that releases share.
type sharedDeadline struct {
	ctx    context.Context
	cancel context.CancelFunc // its timer ends it; kept for vet's sake
	at     time.Time
}

// releaseCtx is a release's context: the deadline (and its cancellation)
// of a shared deadline context, the values of the caller's context.
type releaseCtx struct {
	context.Context                 // the shared deadline: Deadline, Done, Err
	values          context.Context // the caller's context, detached
}

// Value looks the key up in the caller's values first. A detached context
// holds no cancellation of its own, so the context package's lookup of a
// parent to cancel children with finds the shared deadline's.
func (r releaseCtx) Value(key any) any {
	if v := r.values.Value(key); v != nil {
		return v
	}
	return r.Context.Value(key)
}

// releaseContext returns the context of a release: ctx's values without
// its cancellation, and a deadline no more than ReleaseTimeout away and
// no less than 63/64 of it. It reads the real clock, as context.WithTimeout
// does.
func (c *Client) releaseContext(ctx context.Context) context.Context {
	rt := c.opts.ReleaseTimeout
	latest := time.Now().Add(rt)
	d := c.release.Load()
	if d == nil || d.at.After(latest) || d.at.Before(latest.Add(-rt/64)) {
		nd := &sharedDeadline{at: latest}
		nd.ctx, nd.cancel = context.WithDeadline(context.Background(), latest)
		c.release.Store(nd)
		d = nd
	}
	values := detach(ctx)
	if values == context.Background() {
		return d.ctx
	}
	return releaseCtx{Context: d.ctx, values: values}
}
