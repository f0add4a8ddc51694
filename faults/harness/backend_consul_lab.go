package harness

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold-go/leasehold/faults/netlab"
)

// The member partitions on Consul (F13-F16). Every holder talks to the
// front agent, a server, which forwards each write (a lock, a session
// renewal) to the Raft leader and waits up to Consul's rpc_hold_timeout
// (7 s) for one when it knows none. So F14's minority is the front: the
// member with every client attached. Sessions live on the leader (it runs
// their TTL timers, and a new leader restarts them all): a session renewed
// through a front cut from the leader cannot be renewed until the heal.
//
// In the lab the agents run with autopilot's cleanup_dead_servers off.
// With Consul's default, a server that gossip finds failed (a few seconds
// into a cut) is removed from the Raft configuration and its node marked
// left, which deregisters the node and destroys every session created
// through it (all the holders' sessions, when it is the front); the next
// cut, before it has rejoined as a voter (gossip's 30 s reconnect and
// autopilot's 10 s stabilization), can leave two voters without a quorum.
// TestConsulMembersInTheLab fails that way with the default. The member
// partitions are about a cut, not a change of membership: so a cut member
// stays a voter, and its sessions (without checks) live or end by their
// TTL on the leader. After a heal, an agent knows the leader from Raft
// before gossip finds it alive again, and until then it cannot forward a
// write ("Raft leader not found in server lookup mapping").
//
// Consul's Raft runs at raft_multiplier 1, its fastest setting (the
// agents ignore the consul.raft timings outside -dev): heartbeat and
// election timeouts of 1 s, a leader lease of 500 ms. A follower cut from
// its leader loses it 1-2 s later, an isolated leader steps down within
// about a second, and the followers elect a new one a further 1-2 s on.
// That is slower than the default pace of the member partitions (cuts of
// 2.5 x TTL, flaps of TTL/2: 1.9 s and 375 ms in the short mode), so
// PartitionPace sizes them to Consul.

// newLab builds a lab of n members for a store's members and returns it
// with the members' addresses.
func newLab(ctx context.Context, n int) (*netlab.Lab, []string, error) {
	lab, err := netlab.New(ctx, n)
	if err != nil {
		return nil, nil, err
	}
	hosts := make([]string, n)
	for i := range hosts {
		hosts[i] = lab.Addr(i)
	}
	return lab, hosts, nil
}

// consulHeartbeat is the Raft heartbeat (and election) timeout of the
// agents (raft_multiplier 1).
const consulHeartbeat = time.Second

// Lab implements MemberPartitioner.
func (b *Consul) Lab() *netlab.Lab { return b.lab }

// Members implements MemberPartitioner.
func (b *Consul) Members() int { return len(b.c.Agents) }

// LeaderMember implements MemberPartitioner: an agent whose own Raft
// leads, asked until one does.
func (b *Consul) LeaderMember(ctx context.Context) (int, error) {
	for {
		for i := range b.c.Agents {
			if seen, err := b.LeaderSeen(ctx, i); err == nil && seen == i {
				return i, nil
			}
		}
		select {
		case <-ctx.Done():
			return -1, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// LeaderSeen implements MemberPartitioner: what agent i's own Raft knows
// of the leader (Consul answers /v1/status/leader without forwarding it).
func (b *Consul) LeaderSeen(ctx context.Context, i int) (int, error) {
	if !b.c.Agents[i].Running() {
		return -1, fmt.Errorf("consul: agent %s is not running", b.c.Agents[i].Name)
	}
	return b.c.LeaderSeen(ctx, i)
}

// AttachedMembers implements MemberPartitioner: the front, which every
// holder talks to. When it leads, F14 and F15 have it hand the leadership
// over first (MoveLeader), so that they cut it as a follower.
func (b *Consul) AttachedMembers() []int { return []int{b.front} }

// PartitionPace implements PartitionPacer. F13-F15 hold their cut
// 2 x the session renewal period + 1 s (10 s in both modes; at least
// 2.5 x TTL): every session's renewal is sent during the cut, and its
// answer or its timeout (one renewal period) comes before the heal, so a
// renewal through a front cut from the leader fails for every session;
// and the cut follower has lost its leader (after 1-2 s) well before.
// Each F16 cut lasts 1.5 x the heartbeat timeout (1.5 s): an isolated
// leader steps down in it, a cut follower loses its leader in some of the
// cuts and not in others.
func (b *Consul) PartitionPace(ttl time.Duration) (hold, flap time.Duration) {
	class, session := consulSession(ttl)
	renew := (session - class) / 2 // the store's renewal period
	return max(2*renew+time.Second, time.Duration(partitionHold*float64(ttl))), consulHeartbeat * 3 / 2
}

// AgentAddr returns agent i's HTTP API address (the holders reach only the
// front's, through their proxies).
func (b *Consul) AgentAddr(i int) string { return b.c.Agents[i].Addr() }
