package bench

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/leasehold-go/leasehold/consul"
	"github.com/leasehold-go/leasehold/internal/benchcycle"
)

const (
	ttl        = 15 * time.Second // the store's session: 1.5 x TTL
	peerPrefix = "bench-peers/"   // the peers' KV entries
)

// impls returns the implementations, on one Consul client (one HTTP
// transport) closed when b ends.
func impls(b *testing.B) []benchcycle.Impl {
	cfg := api.DefaultConfig()
	cfg.Address = addr
	cli, err := api.NewClient(cfg)
	if err != nil {
		b.Fatal(err)
	}
	st := consul.New(cli, nil)
	b.Cleanup(func() { _ = st.Close() })
	lc := benchcycle.NewClient(b, st)
	sid := session(b, cli)
	return []benchcycle.Impl{
		{Name: "raw", New: raw(cli, sid)},
		{Name: "leasehold", New: benchcycle.Store(st, ttl)},
		{Name: "api-lock", New: apiLock(cli, "")},
		{Name: "api-lock-session", New: apiLock(cli, sid)},
		{Name: "lh-client", New: benchcycle.Client(lc, ttl)},
	}
}

// session creates a Consul session renewed until b ends, then destroyed:
// the one the raw floor and api-lock-session share.
func session(b *testing.B, cli *api.Client) string {
	sid, _, err := cli.Session().Create(&api.SessionEntry{Name: "bench", TTL: "60s", Behavior: api.SessionBehaviorRelease}, nil)
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		_ = cli.Session().RenewPeriodic("60s", sid, nil, done)
	}()
	b.Cleanup(func() { close(done); <-renewed })
	return sid
}

func wopts(ctx context.Context) *api.WriteOptions { return (&api.WriteOptions{}).WithContext(ctx) }

// raw is the floor: a KV acquire of the key's entry with a session made
// once, then a release.
func raw(cli *api.Client, sid string) func(*testing.B, string, bool) (benchcycle.Cycle, func()) {
	return func(_ *testing.B, key string, _ bool) (benchcycle.Cycle, func()) {
		p := &api.KVPair{Key: peerPrefix + key, Session: sid}
		kv := cli.KV()
		return func(ctx context.Context) error {
			ok, _, err := kv.Acquire(p, wopts(ctx))
			if err != nil {
				return err
			}
			if !ok {
				return benchcycle.ErrHeld
			}
			_, _, err = kv.Release(p, wopts(ctx))
			return err
		}, nil
	}
}

// apiLock: consul/api's Lock, try-once (LockTryOnce), one Lock per worker
// locked and unlocked in turn. With sid "" each Lock call makes a session
// of its own (as LockKey's Lock does: create, renew in the background,
// destroy after Unlock); otherwise it uses session sid.
func apiLock(cli *api.Client, sid string) func(*testing.B, string, bool) (benchcycle.Cycle, func()) {
	return func(b *testing.B, key string, _ bool) (benchcycle.Cycle, func()) {
		l, err := cli.LockOpts(&api.LockOptions{Key: peerPrefix + key, Session: sid, SessionTTL: "15s", LockTryOnce: true})
		if err != nil {
			b.Fatal(err)
		}
		return func(ctx context.Context) error {
			lost, err := l.Lock(ctx.Done())
			if err != nil {
				return err
			}
			if lost == nil {
				return benchcycle.ErrHeld
			}
			return l.Unlock()
		}, nil
	}
}
