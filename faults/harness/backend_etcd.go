package harness

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold/internal/testserver"
)

// Etcd is a 3-node etcd cluster on loopback ports (heartbeat 25 ms,
// election timeout 250 ms, with fsync), built by scripts/install/etcd.sh.
type Etcd struct {
	c *testserver.Etcd
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
	var err error
	b.c, err = testserver.StartEtcd(ctx, testserver.EtcdOptions{Nodes: 3, Heartbeat: 25 * time.Millisecond, Election: 250 * time.Millisecond, Dir: dir})
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

// Close implements Backend.
func (b *Etcd) Close() error {
	if b.c != nil {
		testserver.KillAll(b.procs()...)
	}
	return nil
}

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
