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

// Shut is the store's Close: it closes the pool, runs end on each of its
// sessions at once and waits for them all, then ends Ctx and waits for the
// goroutines counted by Add and Go. It reports whether this call closed
// the pool (false: it was closed already, and it did nothing).
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
	p.cancel()
	p.wg.Wait()
	return true
}

// Ctx returns the store's background context, which Shut ends.
func (p *Pool[S]) Ctx() context.Context { return p.ctx }

// Add counts n goroutines of the store that Shut waits for; each calls
// Done when it ends. A goroutine started while the store may be closing is
// counted in WhileOpen.
func (p *Pool[S]) Add(n int) { p.wg.Add(n) }

// Done ends a goroutine counted by Add.
func (p *Pool[S]) Done() { p.wg.Done() }

// Go runs fn on a goroutine that Shut waits for.
func (p *Pool[S]) Go(fn func()) { p.wg.Go(fn) }
