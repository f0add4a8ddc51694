package storetest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	lhredis "github.com/leasehold-go/leasehold/redis"
	"github.com/leasehold-go/leasehold/redis/internal/core"
)

// gatedClient stands for a slow master: the calls of one script wait until
// the test opens the gate (or their context ends), then go through.
type gatedClient struct {
	lhredis.Client
	script *core.Script

	mu      sync.Mutex
	gate    chan struct{} // closed: open
	waiting int
}

func (c *gatedClient) hold(ctx context.Context, sha, src string) {
	if scriptOf(sha, src) != c.script {
		return
	}
	c.mu.Lock()
	gate := c.gate
	c.waiting++
	c.mu.Unlock()
	select {
	case <-gate:
	case <-ctx.Done():
	}
	c.mu.Lock()
	c.waiting--
	c.mu.Unlock()
}

func (c *gatedClient) EvalSha(ctx context.Context, sha string, keys, args []string) (any, error) {
	c.hold(ctx, sha, "")
	return c.Client.EvalSha(ctx, sha, keys, args)
}

func (c *gatedClient) Eval(ctx context.Context, src string, keys, args []string) (any, error) {
	c.hold(ctx, "", src)
	return c.Client.Eval(ctx, src, keys, args)
}

// held is the number of calls waiting at the gate.
func (c *gatedClient) held() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.waiting
}

func (c *gatedClient) open() { close(c.gate) }

// downClient stands for a master that can be turned off: every call
// fails while down is set.
type downClient struct {
	lhredis.Client
	down  atomic.Bool
	calls atomic.Int32 // calls refused
}

var errMasterDown = errors.New("test: master down")

func (c *downClient) EvalSha(ctx context.Context, sha string, keys, args []string) (any, error) {
	if c.down.Load() {
		c.calls.Add(1)
		return nil, errMasterDown
	}
	return c.Client.EvalSha(ctx, sha, keys, args)
}

func (c *downClient) Eval(ctx context.Context, src string, keys, args []string) (any, error) {
	if c.down.Load() {
		c.calls.Add(1)
		return nil, errMasterDown
	}
	return c.Client.Eval(ctx, src, keys, args)
}
