package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// zkBase is the parent of the key nodes the holders use (the store's
// default base path).
const zkBase = "/leasehold"

// Debian's ZooKeeper (3.8.0) can come out of a pause of the whole ensemble
// (F8) and a later leader change with one member holding ephemeral nodes
// that no longer exist anywhere else: ghosts. Seen in the long run (seed
// 9403): the leader that expired every session as the ensemble resumed
// committed their closeSession, yet two of the sessions lived on
// (revalidated as they reconnected) and created nodes through the next
// epochs; when a member whose session table had applied the close became
// leader, ZooKeeperServer.loadData killed the "dead" sessions' nodes in its
// own tree, with no transaction, and the member that synced from it by
// DIFF kept them. No transaction will ever delete them, so a key whose
// queue holds one is held for ever by a session that does not exist, for
// every client of that member (a holder pinned to it waits behind the
// ghost; everyone else waits behind that holder). No client can repair
// that; an operator resyncs the member from the leader (its data wiped).
// So does Heal.

// zkGhosts returns, by member index, the ghosts each member other than
// the leader holds under zkBase. A member's node is a ghost if the leader
// did not list it although the leader had applied the node's creation
// (its czxid is at most the key node's pzxid on the leader), while the
// member, synced after the leader was read, still lists it: a node
// deleted on the leader before the read would have been deleted on the
// member by the sync.
func (b *ZooKeeper) zkGhosts(ctx context.Context, leader int) (map[int][]string, error) {
	lc, err := zkOpen(ctx, b.z.Nodes[leader].Addr())
	if err != nil {
		return nil, fmt.Errorf("leader %s: %w", zkNodeName(leader), err)
	}
	defer lc.Close()
	keys, _, err := lc.Children(zkBase)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("leader %s: %w", zkNodeName(leader), err)
	}
	out := map[int][]string{}
	for i, n := range b.z.Nodes {
		if i == leader {
			continue
		}
		mc, err := zkOpen(ctx, n.Addr())
		if err != nil {
			return nil, fmt.Errorf("member %s: %w", zkNodeName(i), err)
		}
		for _, k := range keys {
			g, err := keyGhosts(lc.Conn, mc.Conn, zkBase+"/"+k)
			if err != nil {
				mc.Close()
				return nil, fmt.Errorf("member %s: %w", zkNodeName(i), err)
			}
			out[i] = append(out[i], g...)
		}
		mc.Close()
	}
	return out, nil
}

// keyGhosts reads key node parent's children on the leader (lc), then on a
// member (mc) after a sync, and returns the member's ghosts (see
// ghostsIn).
func keyGhosts(lc, mc *zk.Conn, parent string) ([]string, error) {
	lkids, lst, err := lc.Children(parent)
	if errors.Is(err, zk.ErrNoNode) {
		lkids, lst, err = nil, &zk.Stat{Pzxid: 1<<63 - 1}, nil // gone on the leader: every node of the member's is old
	}
	if err != nil {
		return nil, err
	}
	if _, err := mc.Sync(parent); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return nil, err
	}
	mkids, _, err := mc.Children(parent)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	member := map[string]int64{}
	for _, k := range mkids {
		if slices.Contains(lkids, k) {
			continue
		}
		ok, st, err := mc.Exists(parent + "/" + k)
		if err != nil {
			return nil, err
		}
		if ok {
			member[k] = st.Czxid
		}
	}
	var out []string
	for _, k := range ghostsIn(lkids, lst.Pzxid, member) {
		out = append(out, parent+"/"+k)
	}
	return out, nil
}

// ghostsIn returns, sorted, the names of member (a member's children of a
// key node, read after a sync, with their creation zxids) that the
// leader's children of that key node (read before, with the key node's
// pzxid) lack although the leader had applied their creation.
func ghostsIn(leader []string, pzxid int64, member map[string]int64) []string {
	var out []string
	for name, czxid := range member {
		if !slices.Contains(leader, name) && czxid <= pzxid {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// healGhosts resyncs every member holding ghosts (see zkGhosts) and says
// what it did ("" if there were none).
func (b *ZooKeeper) healGhosts(ctx context.Context) (string, error) {
	leader, err := b.leaderNow(ctx)
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
	if leader, err = b.leaderNow(ctx); err != nil {
		return "", err
	}
	again, err := b.zkGhosts(ctx, leader)
	for i, g := range again {
		if err == nil && len(g) > 0 {
			err = fmt.Errorf("%s still holds %d ghost nodes after its resync", zkNodeName(i), len(g))
		}
	}
	if err != nil {
		return "", fmt.Errorf("zookeeper: %w", err)
	}
	return strings.Join(did, "; "), nil
}

// resync wipes member i's data and restarts it, so that it takes the
// leader's snapshot, and waits until every server serves.
func (b *ZooKeeper) resync(ctx context.Context, i int) error {
	b.z.Kill(i)
	if err := os.RemoveAll(filepath.Join(b.z.Nodes[i].Dir, "version-2")); err != nil {
		return err
	}
	if err := b.z.Restart(i); err != nil {
		return err
	}
	return b.waitServing(ctx)
}

// zkOpen connects to the one server at addr and waits for a session,
// within zkWait.
func zkOpen(ctx context.Context, addr string) (*zkConn, error) {
	ctx, cancel := context.WithTimeout(ctx, zkWait)
	defer cancel()
	conn, events, err := zkDial([]string{addr}, 4*time.Second)
	if err != nil {
		return nil, err
	}
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				return conn, nil
			}
		case <-ctx.Done():
			conn.Close()
			return nil, fmt.Errorf("no session with %s: %w", addr, ctx.Err())
		}
	}
}
