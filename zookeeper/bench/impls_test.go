package bench

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/leasehold-go/leasehold/internal/benchcycle"
	"github.com/leasehold-go/leasehold/zookeeper"
)

const (
	ttl       = 10 * time.Second // the store's session: 2 x TTL
	peersBase = "/bench-peers"   // the peers' lock nodes, one child per key
)

var acl = zk.WorldACL(zk.PermAll)

// impls returns the implementations, their clients closed when b ends: the
// peers share one go-zookeeper connection (one session), as the store
// shares one session per TTL class.
func impls(b *testing.B) []benchcycle.Impl {
	conn := connect(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := zookeeper.New(ctx, zookeeper.Options{Servers: []string{addr}, Base: "/leasehold-bench",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	lc := benchcycle.NewClient(b, st)
	if _, err := conn.Create(peersBase, nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		b.Fatal(err)
	}
	return []benchcycle.Impl{
		{Name: "raw", New: raw(conn)},
		{Name: "leasehold", New: benchcycle.Store(st, ttl)},
		{Name: "zk-lock", New: zkLock(conn)},
		{Name: "curator", New: curator(conn)},
		{Name: "lh-client", New: benchcycle.Client(lc, ttl)},
	}
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

// connect opens a go-zookeeper connection to the follower, closed when b
// ends, and waits for its session.
func connect(b *testing.B) *zk.Conn {
	conn, events, err := zk.Connect([]string{addr}, 2*ttl, zk.WithLogger(nopLogger{}))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(conn.Close)
	deadline := time.After(10 * time.Second)
	for conn.State() != zk.StateHasSession {
		select {
		case <-events:
		case <-deadline:
			b.Fatalf("no ZooKeeper session with %s within 10 s", addr)
		}
	}
	return conn
}

// peerNode is key's node under peersBase: one path component.
func peerNode(key string) string {
	return peersBase + "/" + strings.ReplaceAll(key, "/", "_")
}

// zkLock: go-zookeeper's zk.Lock (a protected ephemeral sequential node,
// the children listed, a watch on the predecessor), one Lock per worker.
// It always waits: it has no try-once form.
func zkLock(conn *zk.Conn) func(*testing.B, string, bool) (benchcycle.Cycle, func()) {
	return func(b *testing.B, key string, _ bool) (benchcycle.Cycle, func()) {
		path := peerNode(key)
		ensure(b, conn, path)
		l := zk.NewLock(conn, path, acl)
		return func(context.Context) error {
			if err := l.Lock(); err != nil {
				return err
			}
			return l.Unlock()
		}, nil
	}
}

// raw is the floor: create an ephemeral node at the key's path, then
// delete it; on the hot key, a node in the way is waited out with a watch.
func raw(conn *zk.Conn) func(*testing.B, string, bool) (benchcycle.Cycle, func()) {
	return func(_ *testing.B, key string, _ bool) (benchcycle.Cycle, func()) {
		path := peerNode(key)
		return func(ctx context.Context) error {
			for {
				_, err := conn.Create(path, nil, zk.FlagEphemeral, acl)
				if err == nil {
					return conn.Delete(path, -1)
				}
				if !errors.Is(err, zk.ErrNodeExists) {
					return err
				}
				ok, _, ch, err := conn.ExistsW(path)
				if err != nil {
					return err
				}
				if ok {
					if err := wait(ctx, ch); err != nil {
						return err
					}
				}
			}
		}, nil
	}
}

// ensure creates path (a persistent node under peersBase) if it is missing.
func ensure(b *testing.B, conn *zk.Conn, path string) {
	if _, err := conn.Create(path, nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		b.Fatal(err)
	}
}

// wait waits for a watch's event.
func wait(ctx context.Context, ch <-chan zk.Event) error {
	select {
	case ev := <-ch:
		return ev.Err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sequenceOrder sorts lock-node names by their 10-digit sequence suffix.
func sequenceOrder(names []string) {
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(a[len(a)-10:], b[len(b)-10:]) })
}
