package bench

import (
	"context"
	"errors"
	"path"
	"slices"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/leasehold-go/leasehold/internal/benchcycle"
)

// curator is Apache Curator's InterProcessMutex recipe in Go: an ephemeral
// sequential node under the lock's node; the lowest sequence holds the
// lock; any other node watches its predecessor (a data watch, as Curator
// sets, which leaves no watch behind on a node already gone) and lists
// again when it goes. On distinct keys it is the try-once form (Curator's
// acquire with a zero wait): not the lowest, it deletes its node and
// returns benchcycle.ErrHeld.
func curator(conn *zk.Conn) func(*testing.B, string, bool) (benchcycle.Cycle, func()) {
	return func(b *testing.B, key string, hot bool) (benchcycle.Cycle, func()) {
		parent := peerNode(key)
		ensure(b, conn, parent)
		return func(ctx context.Context) error {
			node, err := conn.Create(parent+"/lock-", nil, zk.FlagEphemeralSequential, acl)
			if err != nil {
				return err
			}
			if err := curatorTurn(ctx, conn, parent, path.Base(node), hot); err != nil {
				_ = conn.Delete(node, -1)
				return err
			}
			return conn.Delete(node, -1)
		}, nil
	}
}

// curatorTurn returns once mine is the lowest node under parent; without
// block, benchcycle.ErrHeld if it is not.
func curatorTurn(ctx context.Context, conn *zk.Conn, parent, mine string, block bool) error {
	for {
		kids, _, err := conn.Children(parent)
		if err != nil {
			return err
		}
		sequenceOrder(kids)
		i := slices.Index(kids, mine)
		switch {
		case i < 0:
			return errors.New("curator: our lock node is gone (session lost?)")
		case i == 0:
			return nil
		case !block:
			return benchcycle.ErrHeld
		}
		_, _, ch, err := conn.GetW(parent + "/" + kids[i-1])
		if errors.Is(err, zk.ErrNoNode) {
			continue // the predecessor went meanwhile: list again
		}
		if err != nil {
			return err
		}
		if err := wait(ctx, ch); err != nil {
			return err
		}
	}
}
