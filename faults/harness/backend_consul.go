package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/leasehold-go/leasehold/internal/testserver"

	"github.com/leasehold-go/leasehold/faults/netlab"
)

// Consul is a cluster of 3 Consul server agents (raft_multiplier 1),
// built by scripts/install/consul.sh. Inside the run's private network
// namespace (netlab.Enter) the agents run one per member namespace of a
// network lab, on the lab's addresses, so that the links between them can
// be cut (MemberPartitioner, see backend_consul_lab.go); elsewhere on
// loopback ports.
//
// A consul:// URL names one agent: a deployment's clients talk to their
// local agent, which forwards to the cluster's leader. The holders all talk
// to one agent, the front, each through its own proxy; the front is a
// follower when the cluster starts, and the leader kill (F10) never kills
// it: if the front leads when F10 comes (after a restart of the cluster or
// an earlier election), the harness first has leadership transferred to
// another server (Consul's /v1/operator/raft/transfer-leader) and kills
// that one. So F10 is what a Consul failover is for its clients: their
// agent stays, the Raft leader behind it changes (a new leader restarts
// every session's TTL timer and forgets the lock-delays), and it is not
// one more outage of the holders' only agent, which F9 (every server
// killed) already covers.
type Consul struct {
	c     *testserver.Consul
	lab   *netlab.Lab
	front int // the agent the holders talk to
}

// Name implements Backend.
func (b *Consul) Name() string { return "consul" }

// TakeoverBound implements TakeoverBounder with the consul store's
// documented bound: a dead holder's keys are unlocked when the leader
// invalidates its session, at most 2 x the session TTL after its last
// renewal (the session TTL is 1.5 x the TTL class, the TTL rounded up to
// whole seconds, at least the class + 1 s and at least Consul's 10 s
// minimum), and can be locked again after the lock-delay (the class, at
// most 60 s). Consul does not wake the waiters when a lock-delay ends
// (nothing changes in the KV store), so a waiter's retry comes up to one
// backoff step later (the holders' backoff cap, TTL/10) and then
// consulCommits.
func (b *Consul) TakeoverBound(ttl time.Duration) float64 {
	class, session := consulSession(ttl)
	lockDelay := min(class, time.Minute)
	backoff := max(ttl/10, 10*time.Millisecond)
	return float64(2*session+lockDelay+backoff+consulCommits) / float64(ttl)
}

// consulSession returns the consul store's TTL class for grants of ttl
// (the TTL rounded up to whole seconds) and its session TTL (1.5 x the
// class, at least the class + 1 s and at least Consul's 10 s minimum).
func consulSession(ttl time.Duration) (class, session time.Duration) {
	class = (ttl + time.Second - 1) / time.Second * time.Second
	c := int64(class / time.Second)
	return class, max(time.Duration(max((3*c+1)/2, c+1))*time.Second, 10*time.Second)
}

// consulCommits is the allowance for the invalidation's Raft commit, the
// blocking query's answer and the waiter's lock (another commit).
const consulCommits = 100 * time.Millisecond

// consulWait bounds the wait for the cluster to have a leader after a start
// or a restart.
const consulWait = 60 * time.Second

// Start implements Backend: the cluster, and a follower as the front.
func (b *Consul) Start(ctx context.Context, dir string) error {
	opts := testserver.ConsulOptions{Servers: 3, Dir: dir}
	if netlab.Inside() {
		// A member cut for longer than gossip's failure detection would
		// otherwise be removed from the Raft configuration by autopilot
		// and its node deregistered (see backend_consul_lab.go).
		opts.Args = []string{"-hcl", "autopilot { cleanup_dead_servers = false }"}
		var err error
		if b.lab, opts.Hosts, err = newLab(ctx, opts.Servers); err != nil {
			return err
		}
		opts.Prefix = b.lab.Prefix
	}
	var err error
	b.c, err = testserver.StartConsul(ctx, opts)
	if err != nil {
		return err
	}
	lead, err := b.leader(ctx)
	if err != nil {
		return err
	}
	b.front = (lead + 1) % len(b.c.Agents)
	return nil
}

// Endpoints implements Backend: the front agent's HTTP API.
func (b *Consul) Endpoints() []string { return []string{b.c.Agents[b.front].Addr()} }

// URL implements Backend.
func (b *Consul) URL(eps []string) string { return "consul://" + eps[0] }

// Close implements Backend.
func (b *Consul) Close() error {
	if b.c != nil {
		testserver.KillAll(b.procs()...)
	}
	if b.lab != nil {
		return b.lab.Close()
	}
	return nil
}

func (b *Consul) procs() []*testserver.Process {
	var ps []*testserver.Process
	for _, a := range b.c.Agents {
		ps = append(ps, a.Process)
	}
	return ps
}

// waitServing waits until every running agent knows a leader.
func (b *Consul) waitServing(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, consulWait)
	defer cancel()
	if err := b.c.WaitServing(ctx); err != nil {
		return fmt.Errorf("%w\n%s", err, b.c.Logs())
	}
	return nil
}

// PauseStore implements StorePauser: every server.
func (b *Consul) PauseStore() error {
	return pauseAll(b.procs())
}

// ResumeStore implements StorePauser.
func (b *Consul) ResumeStore() error {
	return resumeAll(b.procs())
}

// KillStore implements StoreRestarter: every server at once.
func (b *Consul) KillStore() error {
	testserver.KillAll(b.procs()...)
	return nil
}

// RestartStore implements StoreRestarter: every server, on its data folder
// (the Raft log and snapshots), or without it (wipe, F9b): the servers form
// a new cluster, what a -dev agent's restart is (it keeps everything in
// memory), so every entry, session and lock-delay is gone and the Raft
// index starts again near zero.
func (b *Consul) RestartStore(ctx context.Context, wipe bool) error {
	if wipe {
		for _, a := range b.c.Agents {
			if err := wipeDir(a.Dir); err != nil {
				return err
			}
		}
	}
	for i := range b.c.Agents {
		if err := b.c.Restart(i); err != nil {
			return err
		}
	}
	return b.waitServing(ctx)
}

// WipeMeaningful implements Wiper: a Consul that loses its data is a -dev
// agent restarted (the way most people first run Consul), or servers whose
// data folders were lost.
func (b *Consul) WipeMeaningful() bool { return true }

// KillLeader implements LeaderKiller: the Raft leader, which is never the
// front (see Consul).
func (b *Consul) KillLeader(ctx context.Context) (string, error) {
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	i, err := b.leader(lctx)
	if err != nil {
		return "", err
	}
	if i == b.front {
		if i, err = b.MoveLeader(lctx, b.front); err != nil {
			return "", err
		}
	}
	b.c.Kill(i)
	return b.c.Agents[i].Name, nil
}

// leader waits until an agent names the cluster's leader.
func (b *Consul) leader(ctx context.Context) (int, error) {
	for {
		i, err := b.c.Leader(ctx)
		if err == nil {
			return i, nil
		}
		select {
		case <-ctx.Done():
			return -1, fmt.Errorf("consul: no leader: %w", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// MoveLeader implements LeaderMover: agent from, the leader, hands the
// leadership to another server (Consul's
// /v1/operator/raft/transfer-leader); it returns the new leader.
func (b *Consul) MoveLeader(ctx context.Context, from int) (int, error) {
	url := "http://" + b.c.Agents[from].Addr() + "/v1/operator/raft/transfer-leader"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return -1, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return -1, fmt.Errorf("consul: transfer leadership: %w", err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	var out struct{ Success bool }
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &out) != nil || !out.Success {
		return -1, fmt.Errorf("consul: transfer leadership: %s: %s", resp.Status, body)
	}
	for {
		i, err := b.leader(ctx)
		if err != nil {
			return -1, err
		}
		if i != from {
			return i, nil
		}
		select {
		case <-ctx.Done():
			return -1, fmt.Errorf("consul: leadership still on %s after a transfer: %w", b.c.Agents[from].Name, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// RestartNode implements LeaderKiller.
func (b *Consul) RestartNode(ctx context.Context, name string) error {
	for i, a := range b.c.Agents {
		if a.Name == name {
			if err := b.c.Restart(i); err != nil {
				return err
			}
			return b.waitServing(ctx)
		}
	}
	return fmt.Errorf("consul: no agent %s", name)
}

// CanStepClock implements ClockStepper: it cannot, and says why.
func (b *Consul) CanStepClock() (bool, string) {
	return false, "Consul times sessions and lock-delays with Go timers on the monotonic clock, and the store's grant deadlines are the holder's monotonic clock: a step of the servers' wall clock moves no lease's end"
}

// StepClock implements ClockStepper; CanStepClock is false.
func (b *Consul) StepClock(time.Duration) error {
	return errors.New("consul: the servers' clock cannot be stepped")
}
