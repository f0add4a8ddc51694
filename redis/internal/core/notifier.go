package core

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Subscription is one pub/sub connection (see redis.Subscription).
type Subscription interface {
	Subscribe(ctx context.Context, channel string) error
	Unsubscribe(ctx context.Context, channel string) error
	Done() <-chan struct{}
	Close() error
}

// Listener opens pub/sub connections (see redis.Client.Listen).
type Listener interface {
	Listen(ctx context.Context, deliver func(channel string)) (Subscription, error)
}

// ErrClosed is returned by a closed Notifier.
var ErrClosed = errors.New("closed")

// unsubscribeTimeout bounds the UNSUBSCRIBE sent when a channel's last
// waiter leaves.
const unsubscribeTimeout = 5 * time.Second

// Notifier multiplexes the waiters of one store over one pub/sub
// connection: a channel is subscribed while it has waiters and unsubscribed
// when the last one leaves. When the connection is lost, every waiter is
// woken (a release may have been missed) and the next Subscribe opens a new
// connection.
type Notifier struct {
	l Listener

	openMu sync.Mutex // serialises opening the connection

	mu     sync.Mutex
	sub    Subscription
	gen    uint64 // generation of sub; bumped on every new connection
	chans  map[string]*entry
	closed bool
	wg     sync.WaitGroup // watchers and unsubscribes
}

type entry struct {
	refs    int                     // guarded by Notifier.mu
	waiters map[chan<- struct{}]int // guarded by Notifier.mu
	op      sync.Mutex              // serialises SUBSCRIBE/UNSUBSCRIBE of the channel
	gen     uint64                  // guarded by op: generation it is subscribed on, 0 if none
}

// NewNotifier returns a notifier over l's connections.
func NewNotifier(l Listener) *Notifier {
	return &Notifier{l: l, chans: make(map[string]*entry)}
}

// Subscribe arranges a non-blocking send on ch whenever a message arrives
// on channel, or the connection carrying it is lost. It returns once the
// server has confirmed the subscription, so a release published after it
// returns is seen. cancel ends it.
func (n *Notifier) Subscribe(ctx context.Context, channel string, ch chan<- struct{}) (cancel func(), err error) {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil, ErrClosed
	}
	e := n.chans[channel]
	if e == nil {
		e = &entry{waiters: make(map[chan<- struct{}]int)}
		n.chans[channel] = e
	}
	e.refs++
	e.waiters[ch]++
	n.mu.Unlock()

	var once sync.Once
	cancel = func() { once.Do(func() { n.leave(channel, e, ch) }) }

	e.op.Lock()
	sub, gen, err := n.current(ctx)
	if err == nil && e.gen != gen {
		if err = sub.Subscribe(ctx, channel); err == nil {
			e.gen = gen
		}
	}
	e.op.Unlock()
	if err != nil {
		cancel()
		return nil, err
	}
	return cancel, nil
}

// current returns the open connection, opening one if there is none.
func (n *Notifier) current(ctx context.Context) (Subscription, uint64, error) {
	n.openMu.Lock()
	defer n.openMu.Unlock()
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil, 0, ErrClosed
	}
	if n.sub != nil {
		defer n.mu.Unlock()
		return n.sub, n.gen, nil
	}
	n.mu.Unlock()

	sub, err := n.l.Listen(ctx, n.deliver)
	if err != nil {
		return nil, 0, err
	}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		_ = sub.Close()
		return nil, 0, ErrClosed
	}
	n.gen++
	n.sub = sub
	gen := n.gen
	n.wg.Add(1)
	n.mu.Unlock()
	go n.watch(sub)
	return sub, gen, nil
}

// watch forgets sub and wakes every waiter when sub's connection ends.
func (n *Notifier) watch(sub Subscription) {
	defer n.wg.Done()
	<-sub.Done()
	n.mu.Lock()
	if n.sub == sub {
		n.sub = nil
		n.wakeAllLocked()
	}
	n.mu.Unlock()
	_ = sub.Close()
}

func (n *Notifier) wakeAllLocked() {
	for _, e := range n.chans {
		for w := range e.waiters {
			select {
			case w <- struct{}{}:
			default:
			}
		}
	}
}

// deliver is called by the connection for every message.
func (n *Notifier) deliver(channel string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if e := n.chans[channel]; e != nil {
		for w := range e.waiters {
			select {
			case w <- struct{}{}:
			default:
			}
		}
	}
}

func (n *Notifier) leave(channel string, e *entry, ch chan<- struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if e.waiters[ch]--; e.waiters[ch] <= 0 {
		delete(e.waiters, ch)
	}
	e.refs--
	if e.refs > 0 {
		return
	}
	if n.closed {
		delete(n.chans, channel)
		return
	}
	n.wg.Add(1)
	go n.unsubscribe(channel, e)
}

// unsubscribe drops channel's subscription if it is still idle.
func (n *Notifier) unsubscribe(channel string, e *entry) {
	defer n.wg.Done()
	e.op.Lock()
	defer e.op.Unlock()
	n.mu.Lock()
	idle, sub, gen := e.refs == 0, n.sub, n.gen
	n.mu.Unlock()
	if idle && sub != nil && e.gen == gen {
		ctx, cancel := context.WithTimeout(context.Background(), unsubscribeTimeout)
		// An error leaves a subscription nobody listens to; its messages
		// are dropped by deliver, and a lost connection ends it anyway.
		_ = sub.Unsubscribe(ctx, channel)
		cancel()
		e.gen = 0
	}
	n.mu.Lock()
	if e.refs == 0 && n.chans[channel] == e {
		delete(n.chans, channel)
	}
	n.mu.Unlock()
}

// Close ends the connection, wakes every waiter and waits for the
// notifier's goroutines. Later Subscribes fail with ErrClosed.
func (n *Notifier) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	sub := n.sub
	n.sub = nil
	n.wakeAllLocked()
	n.mu.Unlock()
	var err error
	if sub != nil {
		err = sub.Close()
	}
	n.wg.Wait()
	return err
}
