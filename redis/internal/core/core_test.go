package core

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestEncodeInjectiveAndBraceFree(t *testing.T) {
	keys := []string{"a", "a/x", "a%", "a%25", "%7B", "{", "}", "{a}", "a}b", "%", "ключ", "a b"}
	seen := map[string]string{}
	for _, k := range keys {
		e := Encode(k)
		if strings.ContainsAny(e, "{}") {
			t.Errorf("Encode(%q) = %q holds a brace", k, e)
		}
		if d, ok := Decode(e); !ok || d != k {
			t.Errorf("Decode(Encode(%q)) = %q, %v", k, d, ok)
		}
		if prev, ok := seen[e]; ok {
			t.Errorf("Encode(%q) = Encode(%q) = %q", k, prev, e)
		}
		seen[e] = k
	}
}

// No key's storage names are a prefix of another key's (etcd's lock `a`
// seeing holders of `a/x`).
func TestNamesPrefixFree(t *testing.T) {
	n, err := NewNames("")
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{"a", "a/x", "a}", "a%", "ab", "a:lock", "a}:lock"}
	for _, a := range keys {
		for _, b := range keys {
			if a == b {
				continue
			}
			for _, na := range []string{n.Lock(a), n.Counter(a), n.Channel(a)} {
				for _, nb := range []string{n.Lock(b), n.Counter(b), n.Channel(b)} {
					if strings.HasPrefix(nb, na) {
						t.Errorf("name %q of key %q is a prefix of %q of key %q", na, a, nb, b)
					}
				}
			}
		}
		if Slot(n.Lock(a)) != Slot(n.Counter(a)) {
			t.Errorf("key %q: lock and counter in different slots", a)
		}
	}
	for _, k := range keys {
		if got, ok := n.KeyOfLock(n.Lock(k)); !ok || got != k {
			t.Errorf("KeyOfLock(Lock(%q)) = %q, %v", k, got, ok)
		}
	}
	for _, bad := range []string{"other:{a}:lock", "leasehold:{a}:token", "leasehold:{%7}:lock", "leasehold:{%41}:lock", "leasehold:{a{}:lock"} {
		if k, ok := n.KeyOfLock(bad); ok {
			t.Errorf("KeyOfLock(%q) = %q, want failure", bad, k)
		}
	}
	if _, err := NewNames("bad{"); err == nil {
		t.Error("a prefix with a brace was accepted")
	}
}

func TestSlot(t *testing.T) {
	// Values from the Redis Cluster specification and CLUSTER KEYSLOT.
	for name, want := range map[string]uint16{
		"123456789":            12739,
		"foo":                  12182,
		"{user1000}.following": Slot("user1000"),
		"{}x":                  Slot("{}x"),
		"leasehold:{a}:lock":   Slot("a"),
		"leasehold:{a}:token":  Slot("a"),
		"{a}{b}":               Slot("a"),
	} {
		if got := Slot(name); got != want {
			t.Errorf("Slot(%q) = %d, want %d", name, got, want)
		}
	}
}

func TestTTLMillisRoundsUp(t *testing.T) {
	for in, want := range map[time.Duration]int64{
		time.Millisecond:        1,
		time.Millisecond + 1:    2,
		1500 * time.Microsecond: 2,
		30 * time.Second:        30000,
		time.Nanosecond:         1,
	} {
		if got := TTLMillis(in); got != want {
			t.Errorf("TTLMillis(%s) = %d, want %d", in, got, want)
		}
	}
}

func TestLeaseValues(t *testing.T) {
	for _, c := range []struct{ owner, label string }{
		{"o", "l"}, {"", ""}, {"a:b", "c:d"}, {"12:x", ":"}, {strings.Repeat("f", 32), "host:42"},
	} {
		v := GrantPrefix(c.owner, 17) + c.label
		l, err := ParseLease(v, 1000)
		if err != nil || l.Owner != c.owner || l.Label != c.label || l.Token != 17 || l.Remaining != time.Second {
			t.Errorf("ParseLease(%q) = %+v, %v", v, l, err)
		}
		if !strings.HasPrefix(v, OwnerPrefix(c.owner)) {
			t.Errorf("%q does not start with its owner prefix", v)
		}
	}
	// No owner's prefix starts another owner's values.
	owners := []string{"a", "a:", "a:1", "1:a", "", ":"}
	for _, a := range owners {
		for _, b := range owners {
			if a != b && strings.HasPrefix(GrantPrefix(b, 5)+"label", OwnerPrefix(a)) {
				t.Errorf("owner %q's prefix matches owner %q's value", a, b)
			}
		}
	}
	for _, v := range []string{"", "x", "1:a", "1:a:", "1:a:x:l", "1:a:0:l", "5:a:1:l", "-1::1:l", "2:a:1:l"} {
		if l, err := ParseLease(v, 0); err == nil {
			t.Errorf("ParseLease(%q) = %+v, want failure", v, l)
		}
	}
}

func TestScriptsLoaded(t *testing.T) {
	for _, s := range Scripts {
		if len(s.SHA) != 40 || !strings.Contains(s.Src, "redis.call") {
			t.Errorf("script %s: sha %q, %d bytes", s.Name, s.SHA, len(s.Src))
		}
	}
}

// canned answers every script call with one reply. It is a unit test of
// reply parsing only; the stores are tested against real servers.
type canned struct {
	reply any
	err   error
	evals int
}

func (c *canned) EvalSha(context.Context, string, []string, []string) (any, error) {
	return c.reply, c.err
}

func (c *canned) Eval(context.Context, string, []string, []string) (any, error) {
	c.evals++
	return c.reply, nil
}

func TestUnexpectedRepliesAreErrors(t *testing.T) {
	for _, r := range []any{
		nil, int64(3), "OK", "0", "", []byte("x"), []any{}, []any{int64(1)}, []any{int64(1), "1"}, []any{int64(1), "x"},
		[]any{int64(0), "1:o:1:l", "bad"}, []any{int64(2), "1"}, []any{int64(0), int64(5), int64(1)},
	} {
		n := &Node{Client: &canned{reply: r}}
		tok, held, err := n.Acquire(context.Background(), "k", "o", "l", 1000)
		if !errors.Is(err, ErrUnexpectedReply) {
			t.Errorf("acquire reply %#v: token %d, held %v, err %v; want ErrUnexpectedReply", r, tok, held, err)
		}
	}
	for _, r := range []any{nil, int64(2), "1", []any{}} {
		n := &Node{Client: &canned{reply: r}}
		if _, err := n.Renew(context.Background(), "k", "o", 1, 1000); !errors.Is(err, ErrUnexpectedReply) {
			t.Errorf("renew reply %#v: %v; want ErrUnexpectedReply", r, err)
		}
		if _, err := n.Release(context.Background(), "k", "o", 1); !errors.Is(err, ErrUnexpectedReply) {
			t.Errorf("release reply %#v: %v; want ErrUnexpectedReply", r, err)
		}
	}
	for _, r := range []any{int64(1), []any{"o"}, []any{"1:o:1:l", "x"}, []any{"1:o:1:l", int64(5), int64(1)}} {
		n := &Node{Client: &canned{reply: r}}
		if _, err := n.Holder(context.Background(), "k"); !errors.Is(err, ErrUnexpectedReply) {
			t.Errorf("holder reply %#v: %v; want ErrUnexpectedReply", r, err)
		}
	}
	for _, r := range []any{[]any{int64(0), "garbage", int64(100)}, []any{"garbage", int64(100)}} {
		n := &Node{Client: &canned{reply: r}}
		_, _, aerr := n.Acquire(context.Background(), "k", "o", "l", 1000)
		_, herr := n.Holder(context.Background(), "k")
		if !errors.Is(aerr, ErrForeignValue) && !errors.Is(herr, ErrForeignValue) {
			t.Errorf("reply %#v: acquire %v, holder %v; want ErrForeignValue", r, aerr, herr)
		}
	}
	n := &Node{Client: &canned{reply: []any{int64(1)}}}
	_, errs := n.RenewMany(context.Background(), []RenewItem{{Key: "a"}, {Key: "b"}})
	if !errors.Is(errs[0], ErrUnexpectedReply) || !errors.Is(errs[1], ErrUnexpectedReply) {
		t.Errorf("renew_many short reply: %v", errs)
	}
}

func TestNoScriptFallsBackToEval(t *testing.T) {
	c := &canned{reply: int64(1), err: errors.New("NOSCRIPT No matching script. Please use EVAL.")}
	ok, err := (&Node{Client: c}).Renew(context.Background(), "k", "o", 1, 1000)
	if err != nil || !ok || c.evals != 1 {
		t.Fatalf("renew after NOSCRIPT: %v %v, %d EVALs", ok, err, c.evals)
	}
	c = &canned{err: errors.New("READONLY You can't write against a read only replica.")}
	if _, err := (&Node{Client: c}).Renew(context.Background(), "k", "o", 1, 1000); err == nil || c.evals != 0 {
		t.Fatalf("other errors must not fall back: %v, %d EVALs", err, c.evals)
	}
}

func TestRenewManyGroups(t *testing.T) {
	items := make([]RenewItem, 2500)
	for i := range items {
		items[i].Key = string(rune('a' + i%26))
	}
	n := &Node{Names: Names{prefix: DefaultPrefix}}
	if g := n.group(items); len(g) != 3 || len(g[0]) != BatchSize || len(g[2]) != 500 {
		t.Fatalf("standalone: %d groups", len(g))
	}
	n.Cluster = true
	g := n.group(items)
	if len(g) != 26 {
		t.Fatalf("cluster: %d groups for 26 slots", len(g))
	}
	for _, idx := range g {
		s := Slot(n.Names.Lock(items[idx[0]].Key))
		for _, i := range idx {
			if Slot(n.Names.Lock(items[i].Key)) != s {
				t.Fatal("a cluster group spans slots")
			}
		}
	}
}
