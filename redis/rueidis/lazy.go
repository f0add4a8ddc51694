package rueidis

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/redis/rueidis"

	lhredis "github.com/leasehold-go/leasehold/redis"
)

// NewLazyClient returns an adapter that creates its rueidis client on
// first use, and again on a later use while creating it fails.
// rueidis.NewClient connects at once and fails when the server is down;
// a redlock store must start, and keep working, with a minority of its
// masters down. A call waits for the connection attempt only as long as its
// context allows. Closing the adapter closes the client.
func NewLazyClient(opt rueidis.ClientOption) lhredis.Client {
	return &lazyClient{opt: opt, addr: strings.Join(opt.InitAddress, ",")}
}

var errLazyClosed = errors.New("client closed")

type lazyClient struct {
	opt  rueidis.ClientOption
	addr string

	mu      sync.Mutex
	c       lhredis.Client // nil until connected
	dialing chan struct{}  // closed when the attempt in progress ends
	err     error          // the last attempt's error
	closed  bool
	wg      sync.WaitGroup // the attempt in progress
}

func (l *lazyClient) get(ctx context.Context) (lhredis.Client, error) {
	l.mu.Lock()
	switch {
	case l.closed:
		l.mu.Unlock()
		return nil, errLazyClosed
	case l.c != nil:
		c := l.c
		l.mu.Unlock()
		return c, nil
	case l.dialing == nil:
		ch := make(chan struct{})
		l.dialing = ch
		l.wg.Add(1)
		go l.dial(ch)
	}
	ch := l.dialing
	l.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.c != nil {
		return l.c, nil
	}
	return nil, l.err
}

func (l *lazyClient) dial(ch chan struct{}) {
	defer l.wg.Done()
	defer close(ch)
	rc, err := rueidis.NewClient(l.opt)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dialing = nil
	l.err = err
	if err != nil {
		return
	}
	if l.closed {
		rc.Close()
		return
	}
	l.c, l.err = NewClient(rc)
}

func (l *lazyClient) EvalSha(ctx context.Context, sha string, keys, args []string) (any, error) {
	c, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return c.EvalSha(ctx, sha, keys, args)
}

func (l *lazyClient) Eval(ctx context.Context, script string, keys, args []string) (any, error) {
	c, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return c.Eval(ctx, script, keys, args)
}

func (l *lazyClient) Listen(ctx context.Context, deliver func(string)) (lhredis.Subscription, error) {
	c, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return c.Listen(ctx, deliver)
}

func (l *lazyClient) Addr() string { return l.addr }

// Cluster reports the connected client's mode; false before it connects
// (a redlock master is a standalone server).
func (l *lazyClient) Cluster() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.c != nil && l.c.Cluster()
}

func (l *lazyClient) Close() error {
	l.mu.Lock()
	l.closed = true
	c := l.c
	l.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
	l.wg.Wait()
	return nil
}

// Scan forwards to the connected client.
func (l *lazyClient) Scan(ctx context.Context, match string, fn func(names []string) error) error {
	c, err := l.get(ctx)
	if err != nil {
		return err
	}
	sc, ok := c.(lhredis.Scanner)
	if !ok {
		return errors.New("rueidis: client cannot SCAN")
	}
	return sc.Scan(ctx, match, fn)
}
