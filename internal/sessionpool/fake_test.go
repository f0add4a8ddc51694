package sessionpool

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// fake is a Session whose set-up is its setUp function.
type fake struct {
	p     *Pool[*fake]
	class time.Duration
	setUp func(context.Context, *fake) error
	held  chan struct{} // receives once per Hold that took a reference (buffered: 1)

	mu   sync.Mutex
	refs int
	gone bool

	up    chan struct{}
	upErr error
}

func (f *fake) Hold() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.gone {
		f.refs++
		select {
		case f.held <- struct{}{}: // tell a waiting test; none waits: dropped
		default:
		}
	}
	return !f.gone
}

func (f *fake) Drop() {
	f.mu.Lock()
	f.refs--
	f.mu.Unlock()
}

func (f *fake) SetUp(ctx context.Context) {
	defer close(f.up)
	if f.upErr = f.setUp(ctx, f); f.upErr != nil {
		f.retire()
	}
}

func (f *fake) Up() <-chan struct{} { return f.up }
func (f *fake) UpErr() error        { return f.upErr }

func (f *fake) retire() {
	f.mu.Lock()
	f.gone = true
	f.mu.Unlock()
	f.p.Forget(f.class, f)
}

func (f *fake) refCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refs
}

var errClosed = errors.New("closed")

// newPool returns a pool of fakes whose set-up is setUp, and counts the
// sessions it creates in made.
func newPool(setUp func(context.Context, *fake) error, made *atomic.Int32) *Pool[*fake] {
	var p *Pool[*fake]
	p = New(func(class time.Duration) *fake {
		made.Add(1)
		return &fake{p: p, class: class, setUp: setUp, refs: 1, up: make(chan struct{}), held: make(chan struct{}, 1)}
	}, func(string) error { return errClosed })
	return p
}
