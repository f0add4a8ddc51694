package sessionpool

import (
	"context"
	"sync"
)

// Enter is the common start of a store call named op that needs the store
// open: it returns err (the call's argument check), ctx's error, or the
// error of a closed store, in that order, or nil.
func (p *Pool[S]) Enter(ctx context.Context, op string, err error) error {
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if p.Closed() {
		return p.closedErr(op)
	}
	return nil
}

// Shut closes the pool and runs end on each of its sessions at once,
// waiting for them all. It reports whether this call closed the pool
// (false: it was closed already, and end ran on none).
func (p *Pool[S]) Shut(end func(S)) bool {
	all, first := p.Close()
	if !first {
		return false
	}
	var wg sync.WaitGroup
	for _, ss := range all {
		wg.Go(func() { end(ss) })
	}
	wg.Wait()
	return true
}
