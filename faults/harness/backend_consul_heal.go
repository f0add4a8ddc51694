package harness

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// consulHealWait bounds Heal's wait for every agent to forward a
// consistent read to the leader again. Serf retries a member it marked
// failed every reconnect interval (30 s), so a healed agent can take that
// long to route to the leader.
const consulHealWait = 75 * time.Second

// Heal implements Healer. A Consul agent forwards a request to the leader
// through its server lookup, which follows gossip (Serf), not Raft: after
// a member partition, an agent that gossip saw fail can follow the new
// leader in Raft (what healMembers waits for) and still answer every
// write and consistent read "Raft leader not found in server lookup
// mapping" until Serf reconnects, up to its 30 s reconnect interval later.
// (A long run saw the front agent do that for more than 15 s after an F14
// heal, and the next fault found no holder making progress.) Heal repairs
// nothing: it waits until every running agent answers a consistent read
// (a missing key, 404, is an answer), and says how long that took when it
// was not at once.
func (b *Consul) Heal(ctx context.Context) (string, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, consulHealWait)
	defer cancel()
	var last string
	for tries := 0; ; tries++ {
		bad := b.unrouted(ctx)
		if len(bad) == 0 {
			if tries == 0 {
				return "", nil
			}
			return fmt.Sprintf("an agent could not reach the leader for %s after the fault ended (%s): Serf's reconnect, waited out", time.Since(start).Round(100*time.Millisecond), last), nil
		}
		last = strings.Join(bad, "; ")
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("consul: agents still cannot reach the leader %s after the fault: %s", consulHealWait, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// RoutesRead reports whether agent i answers a consistent read, which it
// must forward to the leader: nil, or the agent's answer.
func (b *Consul) RoutesRead(ctx context.Context, i int) error {
	return consulConsistentRead(ctx, b.c.Agents[i].Addr())
}

// unrouted lists the running agents whose consistent read fails, each
// with its answer.
func (b *Consul) unrouted(ctx context.Context) []string {
	var bad []string
	for _, a := range b.c.Agents {
		if !a.Process.Running() {
			continue
		}
		if err := consulConsistentRead(ctx, a.Addr()); err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", a.Name, err))
		}
	}
	return bad
}

// consulConsistentRead reads a key that does not exist through the agent
// at addr, with ?consistent (which the leader must answer): nil for 404
// or 200.
func consulConsistentRead(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/v1/kv/leasehold-faults/heal-probe?consistent", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusNotFound {
		return nil
	}
	return fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
}
