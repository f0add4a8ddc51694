package consul_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
	"go.uber.org/goleak"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/consul"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

func TestUnreachableAgent(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	addr := closedPort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := consul.OpenURL(ctx, "consul://"+addr+"?dial_timeout=1s&token=secret")
	if err == nil {
		t.Fatal("OpenURL of a dead address succeeded")
	}
	if !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "unreachable") ||
		strings.Contains(err.Error(), "secret") {
		t.Errorf("OpenURL: %v, want an ErrStore naming the address as unreachable, without the token", err)
	}
	t.Logf("OpenURL: %v", err)

	// A store on a client of a dead agent: the acquire fails naming the
	// store, the key and the cause; nothing is left running after Close.
	cfg := api.DefaultNonPooledConfig()
	cfg.Address = addr
	cli, err := api.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st := consul.New(cli, nil)
	_, err = st.Acquire(tctx(t), areq("k", time.Second))
	if !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), `"k"`) || !strings.Contains(err.Error(), "consul") || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("acquire on a dead agent: %v, want an ErrStore naming the store, the key and the agent as unreachable", err)
	}
	t.Logf("acquire: %v", err)
	if err := st.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	for _, bad := range []string{"consul://", "redis://x:1", "consul://u:p@h:1", "consul://h:1?bogus=1", "consul://h:1?idle=soon", "consul://h:port", "consul://h:1//p"} {
		if _, err := consul.OpenURL(context.Background(), bad); err == nil {
			t.Errorf("OpenURL(%q) accepted", bad)
		}
	}
}

// TestTTLBounds: TTLs outside [1 s, 16 h] are refused naming the store,
// the key and Consul's bounds; a TTL below Consul's 10 s session minimum is
// kept on a 10 s session.
func TestTTLBounds(t *testing.T) {
	c := testserver.NewConsul(t, testserver.ConsulOptions{})
	st := newStore(t, c, 0)
	for _, ttl := range []time.Duration{500 * time.Millisecond, consul.MaxTTL + time.Second} {
		_, err := st.Acquire(tctx(t), areq("bounds", ttl))
		if !errors.Is(err, leasehold.ErrInvalidTTL) || !strings.Contains(err.Error(), "consul") || !strings.Contains(err.Error(), `"bounds"`) || !strings.Contains(err.Error(), "session") {
			t.Errorf("TTL %s: %v, want ErrInvalidTTL naming the store, the key and Consul's session bounds", ttl, err)
		}
		t.Logf("TTL %s: %v", ttl, err)
	}
	if _, err := st.Holder(tctx(t), "bounds"); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("a refused TTL left the key held: %v", err)
	}
	info := st.Info()
	if info.MinTTL != time.Second || info.MaxTTL != 16*time.Hour || info.SafeTokens || !info.PortableGrants || !strings.HasPrefix(info.TokenCaveat, consul.DevCaveat) {
		t.Errorf("Info on a -dev agent %+v", info)
	}
	g, err := st.Acquire(tctx(t), areq("bounds", consul.MaxTTL))
	if err != nil {
		t.Fatalf("the longest TTL: %v", err)
	}
	se, _, err := consulClient(t, c, 0).Session().Info(entry(t, consulClient(t, c, 0), st, "bounds").Session, nil)
	if err != nil || se == nil || se.TTL != "24h0m0s" || se.LockDelay != consul.MaxLockDelay {
		t.Errorf("session of a 16 h grant: %+v, %v; want TTL 24h, lock-delay 60s", se, err)
	}
	_ = st.Release(tctx(t), g)
}

// TestForeignSession: a key whose entry a session not made by leasehold
// holds (consul lock, another program) is held, named as such; renew and
// release of a made-up grant on it are refused and change nothing.
func TestForeignSession(t *testing.T) {
	c := testserver.NewConsul(t, testserver.ConsulOptions{})
	st := newStore(t, c, 0)
	cli := consulClient(t, c, 0)
	sid, _, err := cli.Session().Create(&api.SessionEntry{TTL: "30s"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Session().Destroy(sid, nil)
	name := st.KeyOf("foreign")
	if ok, _, err := cli.KV().Acquire(&api.KVPair{Key: name, Value: []byte("not json"), Session: sid}, nil); !ok || err != nil {
		t.Fatalf("foreign lock: %v, %v", ok, err)
	}
	_, err = st.Acquire(tctx(t), areq("foreign", time.Second))
	var he *leasehold.HeldError
	if !errors.As(err, &he) || !strings.Contains(err.Error(), "not made by leasehold") || !strings.Contains(err.Error(), sid) || he.Token != 0 {
		t.Errorf("acquire of a foreign-held key: %v, want a HeldError naming the foreign session", err)
	}
	t.Logf("acquire: %v", err)
	h, err := st.Holder(tctx(t), "foreign")
	if err != nil || !strings.Contains(h.Label, "not made by leasehold") {
		t.Errorf("Holder: %+v, %v", h, err)
	}
	kv, _, _ := cli.KV().Get(name, nil)
	fake := leasehold.Grant{Key: "foreign", Owner: leasehold.NewOwnerID(), Token: kv.ModifyIndex, TTL: time.Second}
	if _, err := st.Renew(tctx(t), fake); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("renew of a made-up grant: %v", err)
	}
	if err := st.Release(tctx(t), fake); !errors.Is(err, leasehold.ErrNotHeld) || !strings.Contains(err.Error(), "another owner") {
		t.Errorf("release of a made-up grant: %v, want ErrNotHeld saying another owner holds it", err)
	}
	if after, _, _ := cli.KV().Get(name, nil); after == nil || after.Session != sid || after.ModifyIndex != kv.ModifyIndex {
		t.Errorf("the foreign lock changed: %+v", after)
	}
}

const aclConfig = `acl { enabled = true, default_policy = "deny", tokens { initial_management = "root", agent = "root" } }`

// TestACL: a refused ACL token is a clear error at OpenURL; a token that may
// read but not create sessions or write keys fails the acquire naming the
// store, the key and the ACL, and leaves nothing held.
func TestACL(t *testing.T) {
	c := testserver.NewConsul(t, testserver.ConsulOptions{Args: []string{"-hcl", aclConfig}})
	ctx := tctx(t)
	for _, u := range []string{c.URL(0), c.URL(0) + "?token=00000000-0000-0000-0000-000000000001"} {
		_, err := consul.OpenURL(ctx, u)
		if !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), "ACL token was refused") {
			t.Errorf("OpenURL(%s): %v, want an ErrStore saying the ACL token was refused", u, err)
		}
		t.Logf("OpenURL: %v", err)
	}
	root := openURL(t, c.URL(0)+"?token=root")
	defer root.Close()
	readOnly := aclToken(t, root.Client(), `key_prefix "" { policy = "read" } session_prefix "" { policy = "read" }`)
	noKeyWrite := aclToken(t, root.Client(), `key_prefix "" { policy = "read" } session_prefix "" { policy = "write" }`)
	for name, tok := range map[string]string{"read-only": readOnly, "sessions but no key writes": noKeyWrite} {
		st := openURL(t, c.URL(0)+"?token="+tok)
		_, err := st.Acquire(ctx, areq("acl", time.Second))
		if !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), "ACL token was refused") || !strings.Contains(err.Error(), `"acl"`) || !strings.Contains(err.Error(), "consul") {
			t.Errorf("%s token: acquire: %v, want an ErrStore naming the store, the key and the ACL", name, err)
		}
		t.Logf("%s token: acquire: %v", name, err)
		_ = st.Close()
	}
	if _, err := root.Holder(ctx, "acl"); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("a refused acquire left the key held: %v", err)
	}
	g, err := root.Acquire(ctx, areq("acl", time.Second))
	if err != nil {
		t.Fatalf("acquire with the management token: %v", err)
	}
	_ = root.Release(ctx, g)
}

// aclToken creates a policy with rules and returns a token of it.
func aclToken(t *testing.T, cli *api.Client, rules string) string {
	t.Helper()
	p, _, err := cli.ACL().PolicyCreate(&api.ACLPolicy{Name: "p" + leasehold.NewOwnerID()[:8], Rules: rules}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := cli.ACL().TokenCreate(&api.ACLToken{Policies: []*api.ACLTokenPolicyLink{{ID: p.ID}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tok.SecretID
}
