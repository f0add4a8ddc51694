package harness

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// zkWedged is how long the ensemble may go without committing a write,
// once every server serves again after a fault, before Heal calls it
// wedged. A healthy ensemble commits within a few ticks.
const zkWedged = 5 * time.Second

// Heal implements Healer. Debian's ZooKeeper (3.8.0) can come out of a
// pause of the whole ensemble (F8) with a leader that commits nothing:
// both followers drop and re-sync with it while a proposal is in flight,
// the proposal is never acknowledged, and as the leader commits in zxid
// order nothing after it commits either. Every server answers srvr, but
// no session can be created, no node written or deleted, and no session
// expires; holders see connects time out. (It looks like the
// ZOOKEEPER-4394 family of re-sync bugs; no later release was tried.) No
// client can repair that; an
// operator restarts the leader. So does Heal: it probes the ensemble
// with a write of its own, straight to the servers, and if none commits
// within zkWedged it restarts the leader and waits until one does.
//
// Then it looks for ghosts (see zkGhosts): a member holding ephemeral
// nodes the leader does not is wiped and restarted, so that it takes the
// leader's snapshot.
func (b *ZooKeeper) Heal(ctx context.Context) (string, error) {
	var did []string
	if err := zkCommitProbe(ctx, b.Endpoints(), zkWedged); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		name, err := b.restartLeader(ctx)
		if err != nil {
			return "", err
		}
		did = append(did, fmt.Sprintf("the ensemble served but committed no write for %s (a ZooKeeper 3.8 leader wedged after the re-sync); the harness restarted the leader %s, as an operator would", zkWedged, name))
	}
	ghosts, err := b.healGhosts(ctx)
	if err != nil {
		return "", err
	}
	if ghosts != "" {
		did = append(did, ghosts)
	}
	return strings.Join(did, "; "), nil
}

// healGhosts resyncs every member holding ghosts (see zkGhosts) and says
// what it did ("" if there were none).
func (b *ZooKeeper) healGhosts(ctx context.Context) (string, error) {
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	leader, err := b.leader(lctx)
	cancel()
	if err != nil {
		return "", err
	}
	ghosts, err := b.zkGhosts(ctx, leader)
	if err != nil {
		return "", fmt.Errorf("zookeeper: looking for ghost nodes: %w", err)
	}
	var did []string
	for i := range b.z.Nodes {
		g := ghosts[i]
		if len(g) == 0 {
			continue
		}
		if err := b.resync(ctx, i); err != nil {
			return "", fmt.Errorf("zookeeper: resync of %s, which held %d ghost nodes: %w", zkNodeName(i), len(g), err)
		}
		did = append(did, fmt.Sprintf("%s held %d ephemeral nodes the leader %s does not (%s first; a ZooKeeper 3.8 member kept the nodes of sessions the new leader had dropped without a transaction): the harness wiped %s and restarted it to take the leader's snapshot, as an operator would", zkNodeName(i), len(g), zkNodeName(leader), g[0], zkNodeName(i)))
	}
	if len(did) == 0 {
		return "", nil
	}
	lctx, cancel = context.WithTimeout(ctx, 30*time.Second)
	leader, err = b.leader(lctx)
	cancel()
	if err != nil {
		return "", err
	}
	if again, err := b.zkGhosts(ctx, leader); err != nil || len(slices.Concat(slices.Collect(maps.Values(again))...)) > 0 {
		return "", fmt.Errorf("zookeeper: ghost nodes after the resync: %v (%v)", again, err)
	}
	return strings.Join(did, "; "), nil
}

// restartLeader kills the ensemble's leader, starts it again, and waits
// until every server serves and a write commits. It returns the leader's
// name.
func (b *ZooKeeper) restartLeader(ctx context.Context) (string, error) {
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	i, err := b.leader(lctx)
	cancel()
	if err != nil {
		return "", err
	}
	b.z.Kill(i)
	if err := b.z.Restart(i); err != nil {
		return "", err
	}
	if err := b.waitServing(ctx); err != nil {
		return "", err
	}
	if err := zkCommitProbe(ctx, b.Endpoints(), zkWait); err != nil {
		return "", fmt.Errorf("zookeeper: the ensemble commits nothing, even after a restart of its leader %s: %w\n%s", zkNodeName(i), err, b.z.Logs())
	}
	return zkNodeName(i), nil
}

// zkCommitProbe returns nil once the ensemble at servers commits a write
// within d: a new session (whose creation is itself a transaction) that
// creates and deletes an ephemeral node.
func zkCommitProbe(ctx context.Context, servers []string, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var (
		mu    sync.Mutex
		socks []net.Conn
	)
	dial := func(network, addr string, timeout time.Duration) (net.Conn, error) {
		c, err := net.DialTimeout(network, addr, timeout)
		if err == nil {
			mu.Lock()
			socks = append(socks, c)
			mu.Unlock()
		}
		return c, err
	}
	conn, events, err := zk.Connect(servers, 2*time.Second, zk.WithDialer(dial), zk.WithLogInfo(false), zk.WithLogger(quietZK{}))
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- zkWriteOnce(ctx, conn, events) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		err = fmt.Errorf("no write committed within %s: %w", d, ctx.Err())
	}
	// Closing the sockets first ends a connect still waiting for its
	// answer (go-zookeeper waits for it 10 x the read timeout).
	mu.Lock()
	for _, c := range socks {
		_ = c.Close()
	}
	mu.Unlock()
	conn.Close()
	return err
}

// zkWriteOnce waits for the session, then creates and deletes a node.
func zkWriteOnce(ctx context.Context, conn *zk.Conn, events <-chan zk.Event) error {
	for ev := range events {
		if ev.State == zk.StateHasSession {
			break
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	p, err := conn.Create("/leasehold-harness-probe-", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		return err
	}
	if err := conn.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	return nil
}

// quietZK discards go-zookeeper's log lines.
type quietZK struct{}

func (quietZK) Printf(string, ...any) {}
