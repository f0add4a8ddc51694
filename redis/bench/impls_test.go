package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	redsyncgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
	lhredis "github.com/leasehold-go/leasehold/redis"
	"github.com/leasehold-go/leasehold/redis/goredis"
	lhrueidis "github.com/leasehold-go/leasehold/redis/rueidis"
)

type redsyncPool = redsyncredis.Pool

// ttl is the lease TTL of every cycle: long enough never to expire.
const ttl = 30 * time.Second

// errHeld tells the driver to try again at once: the key is held.
var errHeld = errors.New("held")

// attempt tries to acquire key once and, if granted, releases it. It
// returns errHeld when the key was held.
type attempt func(ctx context.Context, key string) error

// impl is one implementation under test.
type impl struct {
	name string
	open func(b *testing.B) attempt
}

func token() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func goredisClient(b *testing.B, s *testserver.Redis) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), PoolSize: 64})
	b.Cleanup(func() { c.Close() })
	return c
}

func rueidisClient(b *testing.B, s *testserver.Redis) rueidis.Client {
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{s.Addr()}, DisableCache: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	return c
}

// cadScript is the raw floor's compare-and-delete.
const cadScript = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`

func rawGoredis(b *testing.B) attempt {
	c := goredisClient(b, srv)
	cad := redis.NewScript(cadScript)
	return func(ctx context.Context, key string) error {
		tok := token()
		ok, err := c.SetNX(ctx, key, tok, ttl).Result()
		if err != nil {
			return err
		}
		if !ok {
			return errHeld
		}
		return cad.Run(ctx, c, []string{key}, tok).Err()
	}
}

func rawRueidis(b *testing.B) attempt {
	c := rueidisClient(b, srv)
	cad := rueidis.NewLuaScript(cadScript)
	return func(ctx context.Context, key string) error {
		tok := token()
		err := c.Do(ctx, c.B().Set().Key(key).Value(tok).Nx().Px(ttl).Build()).Error()
		if rueidis.IsRedisNil(err) {
			return errHeld
		}
		if err != nil {
			return err
		}
		return cad.Exec(ctx, c, []string{key}, []string{tok}).Error()
	}
}

// storeAttempt drives a leasehold store directly.
func storeAttempt(st leasehold.Store) attempt {
	return func(ctx context.Context, key string) error {
		g, err := st.Acquire(ctx, leasehold.AcquireRequest{Key: key, Owner: leasehold.NewOwnerID(), Label: "bench", TTL: ttl})
		if errors.Is(err, leasehold.ErrHeld) {
			return errHeld
		}
		if err != nil {
			return err
		}
		return st.Release(ctx, g)
	}
}

// clientAttempt drives a leasehold store through a Client: the whole lease
// lifecycle (deadline, renewal goroutine, cancellation) on top.
func clientAttempt(b *testing.B, st leasehold.Store) attempt {
	c, err := leasehold.New(st, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return func(ctx context.Context, key string) error {
		l, err := c.Acquire(ctx, key, leasehold.AcquireOptions{TTL: ttl})
		if errors.Is(err, leasehold.ErrHeld) {
			return errHeld
		}
		if err != nil {
			return err
		}
		return l.Release(ctx)
	}
}

func lhGoredis(b *testing.B) lhredis.Client {
	a, err := goredis.NewClient(goredisClient(b, srv))
	if err != nil {
		b.Fatal(err)
	}
	return a
}

func lhRueidis(b *testing.B) lhredis.Client {
	a, err := lhrueidis.NewClient(rueidisClient(b, srv))
	if err != nil {
		b.Fatal(err)
	}
	return a
}

func lhStore(b *testing.B, c lhredis.Client) *lhredis.Store {
	st, err := lhredis.New(c, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

func lhRedlock(n int) func(b *testing.B) attempt {
	return func(b *testing.B) attempt {
		var cs []*redis.Client
		for _, m := range masters[:n] {
			cs = append(cs, goredisClient(b, m))
		}
		st, err := goredis.NewRedlock(cs, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		return storeAttempt(st)
	}
}

func bsm(b *testing.B) attempt {
	l := redislock.New(goredisClient(b, srv))
	return func(ctx context.Context, key string) error {
		lock, err := l.Obtain(ctx, key, ttl, nil)
		if errors.Is(err, redislock.ErrNotObtained) {
			return errHeld
		}
		if err != nil {
			return err
		}
		return lock.Release(ctx)
	}
}

// rueidisLock is rueidis's own lock (rueidislock) on the one server: one
// key (KeyMajority 1), valid for ttl, released synchronously by the cancel
// function TryWithContext returns. TryNextAfter, its timeout of one
// attempt (20 ms by default), is raised to a second: on a loaded machine a
// 64-goroutine run fails on it, and with one key it bounds nothing else.
func rueidisLock(b *testing.B) attempt {
	l, err := rueidislock.NewLocker(rueidislock.LockerOption{
		ClientOption: rueidis.ClientOption{InitAddress: []string{srv.Addr()}},
		KeyMajority:  1, KeyValidity: ttl, NoLoopTracking: true, TryNextAfter: time.Second,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(l.Close)
	return func(ctx context.Context, key string) error {
		_, release, err := l.TryWithContext(ctx, key)
		if errors.Is(err, rueidislock.ErrNotLocked) {
			return errHeld
		}
		if err != nil {
			return err
		}
		release()
		return nil
	}
}

func redsyncN(n int) func(b *testing.B) attempt {
	return func(b *testing.B) attempt {
		var pools []redsyncPool
		for _, m := range masters[:n] {
			pools = append(pools, redsyncgoredis.NewPool(goredisClient(b, m)))
		}
		if n == 1 {
			pools = []redsyncPool{redsyncgoredis.NewPool(goredisClient(b, srv))}
		}
		rs := redsync.New(pools...)
		return func(ctx context.Context, key string) error {
			m := rs.NewMutex(key, redsync.WithExpiry(ttl), redsync.WithTries(1))
			if err := m.TryLockContext(ctx); err != nil {
				var taken *redsync.ErrTaken
				if errors.Is(err, redsync.ErrFailed) || errors.As(err, &taken) {
					return errHeld
				}
				return err
			}
			_, err := m.UnlockContext(ctx)
			return err
		}
	}
}

var impls = []impl{
	{"raw-goredis", rawGoredis},
	{"raw-rueidis", rawRueidis},
	{"leasehold-goredis", func(b *testing.B) attempt { return storeAttempt(lhStore(b, lhGoredis(b))) }},
	{"leasehold-rueidis", func(b *testing.B) attempt { return storeAttempt(lhStore(b, lhRueidis(b))) }},
	{"lh-client-goredis", func(b *testing.B) attempt { return clientAttempt(b, lhStore(b, lhGoredis(b))) }},
	{"lh-client-rueidis", func(b *testing.B) attempt { return clientAttempt(b, lhStore(b, lhRueidis(b))) }},
	{"bsm-redislock", bsm},
	{"rueidislock", rueidisLock},
	{"redsync-1", redsyncN(1)},
	{"leasehold-redlock-3", lhRedlock(3)},
	{"redsync-3", redsyncN(3)},
	{"leasehold-redlock-5", lhRedlock(5)},
	{"redsync-5", redsyncN(5)},
}
