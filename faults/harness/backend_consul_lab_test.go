package harness_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/harness"
)

// consulPut sends a PUT to the agent at addr and returns its answer's body;
// an error when it does not answer 200 within 3 s.
func consulPut(ctx context.Context, addr, path, body string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, "http://"+addr+path, bytes.NewBufferString(body))
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return out, fmt.Errorf("%s: %s", resp.Status, out)
	}
	return out, nil
}

// consulAgree waits until every agent follows one leader, and returns it.
func consulAgree(t *testing.T, b *harness.Consul) int {
	t.Helper()
	for end := time.Now().Add(60 * time.Second); ; {
		lead := followed(t, b, 0, func(s int) bool { return s >= 0 })
		agree := true
		for j := 1; j < b.Members(); j++ {
			agree = agree && followed(t, b, j, func(s int) bool { return s >= 0 }) == lead
		}
		if agree {
			return lead
		}
		if time.Now().After(end) {
			t.Fatal("the agents follow different leaders 60 s after the heal")
		}
	}
}

// The Consul backend runs its agents in the run's lab, on its addresses.
// Isolating the leader gets the followers a new one, and the old leader,
// alone, can take no write. Isolating the front (the follower every holder
// talks to, F14's minority) leaves it without a leader: a session renewed
// through it fails to renew, while the same session is renewed through the
// majority; after the heal the front renews it again. (If the front was
// elected while the leader was isolated, another follower stands in.)
func TestConsulMembersInTheLab(t *testing.T) {
	b := &harness.Consul{}
	if err := b.Start(t.Context(), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	lab := b.Lab()
	if lab == nil || b.Members() != 3 {
		t.Fatalf("lab %v, %d members: the agents are not in a lab", lab, b.Members())
	}
	front := b.AttachedMembers()[0]
	for i := range b.Members() {
		if a := b.AgentAddr(i); !strings.HasPrefix(a, lab.Addr(i)+":") {
			t.Fatalf("agent %d serves on %s, not on its lab address %s", i, a, lab.Addr(i))
		}
	}
	if ep := b.Endpoints()[0]; ep != b.AgentAddr(front) {
		t.Fatalf("the front (agent %d) serves on %s, not on its lab address %s", front, ep, lab.Addr(front))
	}
	l, err := b.LeaderMember(t.Context())
	if err != nil || l == front {
		t.Fatalf("leader %d (%v), front %d: the front must start a follower", l, err, front)
	}
	t.Run("leader isolated", func(t *testing.T) { consulIsolateLeader(t, b, l) })
	t.Run("follower isolated", func(t *testing.T) { consulIsolateFollower(t, b) })
}

// consulIsolateLeader isolates the leader l: the others elect a new one,
// l loses its own and takes no write.
func consulIsolateLeader(t *testing.T, b *harness.Consul, l int) {
	lab := b.Lab()
	if err := lab.Isolate(t.Context(), l); err != nil {
		t.Fatal(err)
	}
	f := (l + 1) % 3
	followed(t, b, f, func(s int) bool { return s >= 0 && s != l })
	followed(t, b, l, func(s int) bool { return s < 0 })
	if out, err := consulPut(t.Context(), b.AgentAddr(l), "/v1/kv/isolated", "x"); err == nil {
		t.Fatalf("the isolated old leader took a write: %s", out)
	}
	if _, err := consulPut(t.Context(), b.AgentAddr(f), "/v1/kv/majority", "x"); err != nil {
		t.Fatalf("the majority took no write: %v", err)
	}
	if err := lab.Heal(t.Context()); err != nil {
		t.Fatal(err)
	}
	consulAgree(t, b)
}

// consulIsolateFollower isolates a follower with a session created
// through it: the front if it follows, else another follower.
func consulIsolateFollower(t *testing.T, b *harness.Consul) {
	lab := b.Lab()
	l := consulAgree(t, b)
	v := b.AttachedMembers()[0]
	if v == l {
		v = (l + 1) % 3
	}
	out, err := consulPut(t.Context(), b.AgentAddr(v), "/v1/session/create", `{"TTL": "10s", "NodeChecks": []}`)
	if err != nil {
		t.Fatal(err)
	}
	var s struct{ ID string }
	if err := json.Unmarshal(out, &s); err != nil || s.ID == "" {
		t.Fatalf("session create said %s (%v)", out, err)
	}
	if err := lab.Isolate(t.Context(), v); err != nil {
		t.Fatal(err)
	}
	followed(t, b, v, func(s int) bool { return s < 0 })
	if out, err := consulPut(t.Context(), b.AgentAddr(v), "/v1/session/renew/"+s.ID, ""); err == nil {
		t.Fatalf("the session was renewed through the isolated follower %d: %s", v, out)
	}
	m := followed(t, b, (v+1)%3, func(s int) bool { return s >= 0 && s != v })
	if out, err := consulPut(t.Context(), b.AgentAddr(m), "/v1/session/renew/"+s.ID, ""); err != nil || !strings.Contains(string(out), s.ID) {
		t.Fatalf("the majority (leader %d) did not renew the session: %s (%v)\n%s", m, out, err, consulSessions(b))
	}
	if err := lab.Heal(t.Context()); err != nil {
		t.Fatal(err)
	}
	consulAgree(t, b)
	// Until gossip finds the leader alive again, the healed follower knows
	// it from Raft but cannot forward to it ("Raft leader not found in
	// server lookup mapping").
	for end := time.Now().Add(30 * time.Second); ; {
		out, err := consulPut(t.Context(), b.AgentAddr(v), "/v1/session/renew/"+s.ID, "")
		if err == nil && strings.Contains(string(out), s.ID) {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("the healed follower %d did not renew the session in 30 s: %s (%v)\n%s", v, out, err, consulSessions(b))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// consulSessions returns what each agent holds of the sessions (a stale
// read of its own state), for failure messages.
func consulSessions(b *harness.Consul) string {
	var sb strings.Builder
	for i := range b.Members() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+b.AgentAddr(i)+"/v1/session/list?stale", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			out, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			fmt.Fprintf(&sb, "agent %d: %s\n", i, out)
		}
		cancel()
	}
	return sb.String()
}
