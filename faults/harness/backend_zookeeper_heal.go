package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
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

// restartLeader kills the ensemble's leader, starts it again, and waits
// until every server serves and a write commits. It returns the leader's
// name.
func (b *ZooKeeper) restartLeader(ctx context.Context) (string, error) {
	i, err := b.leaderNow(ctx)
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
	conn, events, err := zkDial(servers, 2*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	done := make(chan error, 1)
	go func() { done <- zkWriteOnce(ctx, conn.Conn, events) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		err = fmt.Errorf("no write committed within %s: %w", d, ctx.Err())
	}
	return err
}

// leaderNow returns the ensemble's leader, waiting for one at most 30 s.
func (b *ZooKeeper) leaderNow(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return b.leader(ctx)
}

// zkConn is a go-zookeeper Conn that knows the sockets it dialled: Close
// closes them first, which ends a connect still waiting for its answer
// (go-zookeeper waits for it 10 x the read timeout).
type zkConn struct {
	*zk.Conn
	mu    sync.Mutex
	socks []net.Conn
}

// zkDial connects to servers with a session timeout of timeout (quietly).
func zkDial(servers []string, timeout time.Duration) (*zkConn, <-chan zk.Event, error) {
	c := &zkConn{}
	dial := func(network, addr string, timeout time.Duration) (net.Conn, error) {
		nc, err := net.DialTimeout(network, addr, timeout)
		if err == nil {
			c.mu.Lock()
			c.socks = append(c.socks, nc)
			c.mu.Unlock()
		}
		return nc, err
	}
	conn, events, err := zk.Connect(servers, timeout, zk.WithDialer(dial), zk.WithLogInfo(false), zk.WithLogger(quietZK{}))
	if err != nil {
		return nil, nil, err
	}
	c.Conn = conn
	return c, events, nil
}

// Close closes the sockets, then the Conn.
func (c *zkConn) Close() {
	c.mu.Lock()
	for _, s := range c.socks {
		_ = s.Close()
	}
	c.mu.Unlock()
	c.Conn.Close()
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
