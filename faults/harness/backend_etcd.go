package harness

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold/internal/testserver"

	"github.com/leasehold-go/leasehold/faults/netlab"
)

// Etcd is a 3-node etcd cluster (heartbeat 25 ms, election timeout
// 250 ms, with fsync), built by scripts/install/etcd.sh. Inside the run's
// private network namespace (netlab.Enter) its members run one per member
// namespace of a network lab, on the lab's addresses, so that the links
// between them can be cut (MemberPartitioner); elsewhere on loopback ports.
//
// Holder slot 0's client balances over every member; slot k >= 1's is
// pinned to member (k-1) mod 3 (HolderURL), so that with the default three
// holders, members 0 and 1 have a holder that talks to no other member: the
// clients F14 leaves attached to an isolated follower.
type Etcd struct {
	c   *testserver.Etcd
	lab *netlab.Lab
}

// Name implements Backend.
func (b *Etcd) Name() string { return "etcd" }

// TakeoverBound implements TakeoverBounder with the etcd store's documented
// bound: a dead holder's keys go when its session's etcd lease expires,
// after at most max(1.5 x TTL, TTL + 1 s) (TTL rounded up to whole
// seconds), plus etcd's expiry check (up to 0.5 s), plus etcdCommits for
// the revocation's raft commit, the watch event and the waiter's grant.
func (b *Etcd) TakeoverBound(ttl time.Duration) float64 {
	class := (ttl + time.Second - 1) / time.Second * time.Second
	lease := max(class*3/2, class+time.Second)
	return float64(lease+etcdExpiryCheck+etcdCommits) / float64(ttl)
}

const (
	// etcdExpiryCheck is how often etcd's leader looks for expired leases.
	etcdExpiryCheck = 500 * time.Millisecond
	// etcdCommits is the allowance for what follows an expiry: the
	// revocation's raft commit (a quorum fsync), the watch event that wakes
	// the waiter, and the waiter's own grant (another commit).
	etcdCommits = 100 * time.Millisecond
)

// etcdWait bounds the wait for the cluster to be healthy after a start or
// a restart.
const etcdWait = 60 * time.Second

// Start implements Backend.
func (b *Etcd) Start(ctx context.Context, dir string) error {
	opts := testserver.EtcdOptions{Nodes: 3, Heartbeat: 25 * time.Millisecond, Election: 250 * time.Millisecond, Dir: dir}
	var err error
	b.lab, opts.Hosts, opts.Prefix, err = memberLab(ctx, opts.Nodes)
	if err != nil {
		return err
	}
	b.c, err = testserver.StartEtcd(ctx, opts)
	return err
}

// waitHealthy waits until every running node is healthy.
func (b *Etcd) waitHealthy(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, etcdWait)
	defer cancel()
	if err := b.c.WaitHealthy(ctx); err != nil {
		return fmt.Errorf("%w\n%s", err, b.c.Logs())
	}
	return nil
}

// Endpoints implements Backend.
func (b *Etcd) Endpoints() []string {
	var out []string
	for _, ep := range b.c.Endpoints() {
		out = append(out, strings.TrimPrefix(ep, "http://"))
	}
	return out
}

// URL implements Backend.
func (b *Etcd) URL(eps []string) string { return "etcd://" + strings.Join(eps, ",") }

// HolderURL implements HolderURLer: slot 0 balances over every member,
// slot k >= 1 is pinned to member (k-1) mod 3.
func (b *Etcd) HolderURL(slot int, eps []string) string {
	return b.URL(pinnedEndpoints(slot, eps))
}

// Close implements Backend.
func (b *Etcd) Close() error {
	if b.c != nil {
		testserver.KillAll(b.procs()...)
	}
	if b.lab != nil {
		return b.lab.Close()
	}
	return nil
}

// Lab implements MemberPartitioner.
func (b *Etcd) Lab() *netlab.Lab { return b.lab }

// Members implements MemberPartitioner.
func (b *Etcd) Members() int { return len(b.c.Nodes) }

// LeaderMember implements MemberPartitioner.
func (b *Etcd) LeaderMember(ctx context.Context) (int, error) { return b.c.Leader(ctx) }

// LeaderSeen implements MemberPartitioner.
func (b *Etcd) LeaderSeen(ctx context.Context, i int) (int, error) { return b.c.LeaderSeen(ctx, i) }

// AttachedMembers implements MemberPartitioner: the members that holder
// slots 1 and 2 are pinned to (HolderURL).
func (b *Etcd) AttachedMembers() []int { return []int{0, 1} }

func (b *Etcd) procs() []*testserver.Process {
	var ps []*testserver.Process
	for _, n := range b.c.Nodes {
		ps = append(ps, n.Process)
	}
	return ps
}

// PauseStore implements StorePauser: every node.
func (b *Etcd) PauseStore() error {
	return pauseAll(b.procs())
}

// ResumeStore implements StorePauser.
func (b *Etcd) ResumeStore() error {
	return resumeAll(b.procs())
}

// KillStore implements StoreRestarter: every node at once.
func (b *Etcd) KillStore() error {
	testserver.KillAll(b.procs()...)
	return nil
}

// RestartStore implements StoreRestarter: every node, on its data.
func (b *Etcd) RestartStore(ctx context.Context, _ bool) error {
	for i := range b.c.Nodes {
		if err := b.c.Restart(i); err != nil {
			return err
		}
	}
	return b.waitHealthy(ctx)
}

// KillLeader implements LeaderKiller.
func (b *Etcd) KillLeader(ctx context.Context) (string, error) {
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	i, err := b.c.Leader(lctx)
	if err != nil {
		return "", err
	}
	b.c.Kill(i)
	return b.c.Nodes[i].Name, nil
}

// RestartNode implements LeaderKiller.
func (b *Etcd) RestartNode(ctx context.Context, name string) error {
	for i, n := range b.c.Nodes {
		if n.Name == name {
			if err := b.c.Restart(i); err != nil {
				return err
			}
			return b.waitHealthy(ctx)
		}
	}
	return fmt.Errorf("etcd: no node %s", name)
}
