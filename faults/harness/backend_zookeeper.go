package harness

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold/internal/testserver"

	"github.com/leasehold-go/leasehold/faults/netlab"
)

// ZooKeeper is a 3-member ZooKeeper ensemble (tick 100 ms, session
// timeouts from 2 ticks to 60 s), from Debian's zookeeper package
// (scripts/install/zookeeper.sh). Inside the run's private network
// namespace (netlab.Enter) its servers run one per member namespace of a
// network lab, on the lab's addresses, so that the links between them can
// be cut (MemberPartitioner); elsewhere on loopback ports.
//
// Holder slot 0 names all three servers in its URL, each behind the
// holder's own proxy, so a leader kill (F10) is a failover under it: its
// session moves to a survivor. Slot k >= 1 names only server (k-1) mod 3
// (HolderURL): its session is attached to that server and cannot move, so
// that with the default three holders, servers 0 and 1 have a holder whose
// session stays on them: the sessions F14 leaves attached to an isolated
// follower, which the majority's leader must expire.
type ZooKeeper struct {
	z   *testserver.ZooKeeper
	lab *netlab.Lab
}

// zkTick is the ensemble's tickTime: the granularity of its session
// expiry.
const zkTick = 100 * time.Millisecond

// zkCommits is the allowance for what follows a session's expiry: the
// follower's relay of the session's last ping to the leader (up to half a
// tick after the ping), the closeSession transaction's quorum commit, the
// watch event that wakes the next node's waiter, and its listing of the
// queue.
const zkCommits = zkTick/2 + 100*time.Millisecond

// zkWait bounds the wait for the ensemble to serve after a start or a
// restart (a new election).
const zkWait = 60 * time.Second

// Name implements Backend.
func (b *ZooKeeper) Name() string { return "zookeeper" }

// TakeoverBound implements TakeoverBounder with the zookeeper store's
// documented bound: a dead holder's nodes go when the leader expires its
// session, one session timeout (2 x the TTL class: the TTL rounded up to
// 100 ms) after it last heard from it, rounded up to the next tick, plus
// zkCommits.
func (b *ZooKeeper) TakeoverBound(ttl time.Duration) float64 {
	class := (ttl + 100*time.Millisecond - 1) / (100 * time.Millisecond) * (100 * time.Millisecond)
	return float64(2*class+zkTick+zkCommits) / float64(ttl)
}

// Start implements Backend.
func (b *ZooKeeper) Start(ctx context.Context, dir string) error {
	opts := testserver.ZooKeeperOptions{Nodes: 3, Tick: zkTick, Dir: dir}
	var err error
	b.lab, opts.Hosts, opts.Prefix, err = memberLab(ctx, opts.Nodes)
	if err != nil {
		return err
	}
	b.z, err = testserver.StartZooKeeper(ctx, opts)
	return err
}

// Endpoints implements Backend: every server's client port.
func (b *ZooKeeper) Endpoints() []string {
	var out []string
	for _, n := range b.z.Nodes {
		out = append(out, n.Addr())
	}
	return out
}

// URL implements Backend.
func (b *ZooKeeper) URL(eps []string) string { return "zk://" + strings.Join(eps, ",") }

// HolderURL implements HolderURLer: slot 0 names every server, slot k >= 1
// only server (k-1) mod 3.
func (b *ZooKeeper) HolderURL(slot int, eps []string) string {
	return b.URL(pinnedEndpoints(slot, eps))
}

// Close implements Backend.
func (b *ZooKeeper) Close() error {
	if b.z != nil {
		testserver.KillAll(b.procs()...)
	}
	if b.lab != nil {
		return b.lab.Close()
	}
	return nil
}

// Lab implements MemberPartitioner.
func (b *ZooKeeper) Lab() *netlab.Lab { return b.lab }

// Members implements MemberPartitioner.
func (b *ZooKeeper) Members() int { return len(b.z.Nodes) }

// LeaderMember implements MemberPartitioner: the server whose srvr says
// Mode: leader.
func (b *ZooKeeper) LeaderMember(ctx context.Context) (int, error) { return b.leader(ctx) }

// LeaderSeen implements MemberPartitioner: a server that does not serve
// (it lost its leader or its quorum) has none; a follower follows the
// server its connection to a leader's quorum port goes to.
func (b *ZooKeeper) LeaderSeen(ctx context.Context, i int) (int, error) {
	return b.z.LeaderSeen(ctx, i)
}

// AttachedMembers implements MemberPartitioner: the servers that holder
// slots 1 and 2 are pinned to (HolderURL).
func (b *ZooKeeper) AttachedMembers() []int { return []int{0, 1} }

func (b *ZooKeeper) procs() []*testserver.Process {
	var ps []*testserver.Process
	for _, n := range b.z.Nodes {
		ps = append(ps, n.Process)
	}
	return ps
}

// waitServing waits until every running server serves.
func (b *ZooKeeper) waitServing(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, zkWait)
	defer cancel()
	if err := b.z.WaitServing(ctx); err != nil {
		return fmt.Errorf("%w\n%s", err, b.z.Logs())
	}
	return nil
}

// PauseStore implements StorePauser: every server.
func (b *ZooKeeper) PauseStore() error {
	return pauseAll(b.procs())
}

// ResumeStore implements StorePauser. It returns once the ensemble serves
// again (a quorum re-formed), so that the run's quiet window, which checks
// that every key progresses after the faults healed, starts when the
// ensemble has healed too.
func (b *ZooKeeper) ResumeStore() error {
	if err := resumeAll(b.procs()); err != nil {
		return err
	}
	return b.waitServing(context.Background())
}

// KillStore implements StoreRestarter: every server at once.
func (b *ZooKeeper) KillStore() error {
	testserver.KillAll(b.procs()...)
	return nil
}

// RestartStore implements StoreRestarter: every server, on its data (its
// transaction log and snapshots: zxids, the tokens, carry on from them).
func (b *ZooKeeper) RestartStore(ctx context.Context, _ bool) error {
	for i := range b.z.Nodes {
		if err := b.z.Restart(i); err != nil {
			return err
		}
	}
	return b.waitServing(ctx)
}

// KillLeader implements LeaderKiller.
func (b *ZooKeeper) KillLeader(ctx context.Context) (string, error) {
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	i, err := b.leader(lctx)
	if err != nil {
		return "", err
	}
	b.z.Kill(i)
	return zkNodeName(i), nil
}

// leader waits for the ensemble's leader (after a restart an election may
// still be going on).
func (b *ZooKeeper) leader(ctx context.Context) (int, error) {
	for {
		i, err := b.z.Leader(ctx)
		if err == nil {
			return i, nil
		}
		select {
		case <-ctx.Done():
			return -1, fmt.Errorf("zookeeper: no leader: %w", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// RestartNode implements LeaderKiller.
func (b *ZooKeeper) RestartNode(ctx context.Context, name string) error {
	for i := range b.z.Nodes {
		if zkNodeName(i) == name {
			if err := b.z.Restart(i); err != nil {
				return err
			}
			return b.waitServing(ctx)
		}
	}
	return fmt.Errorf("zookeeper: no server %s", name)
}

// zkNodeName names server i (its myid) in the run's history.
func zkNodeName(i int) string { return fmt.Sprintf("zk%d", i+1) }

// CanStepClock implements ClockStepper: it cannot, and says why.
func (b *ZooKeeper) CanStepClock() (bool, string) {
	return false, "ZooKeeper expires sessions on the JVM's monotonic clock (System.nanoTime) and the store's grant deadlines are the holder's monotonic clock: a step of the servers' wall clock moves no lease's end"
}

// StepClock implements ClockStepper; CanStepClock is false.
func (b *ZooKeeper) StepClock(time.Duration) error {
	return errors.New("zookeeper: the servers' clock cannot be stepped")
}
