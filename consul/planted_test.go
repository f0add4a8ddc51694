package consul_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/consul"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

// ourValue is a leasehold value with token, as a planted entry holds it.
func ourValue(token uint64) []byte {
	return []byte(fmt.Sprintf(`{"token":%d,"owner":"00112233445566778899aabbccddeeff","label":"planted"}`, token))
}

// TestPlantedEntries: an unlocked entry under the prefix that is not a
// valid leasehold value is refused as a *leasehold.ForeignRecordError in a
// *leasehold.StoreError, and left as it is; a planted token at the largest
// uint64 is refused with ErrTokensExhausted (no wrap to a low token), one
// just below it gives that largest token once and then the same refusal,
// and neither pushes other keys' tokens up.
func TestPlantedEntries(t *testing.T) {
	c := testserver.NewConsul(t, testserver.ConsulOptions{})
	st := newStore(t, c, 0)
	cli := consulClient(t, c, 0)
	plant := func(key string, v []byte, flags uint64) string {
		t.Helper()
		name := st.KeyOf(key)
		if _, err := cli.KV().Put(&api.KVPair{Key: name, Value: v, Flags: flags}, nil); err != nil {
			t.Fatal(err)
		}
		return name
	}
	for name, c := range map[string]struct {
		v     []byte
		flags uint64
	}{
		"other flags":         {[]byte("hello"), 0},
		"not json":            {[]byte("not json"), consul.Flags},
		"two json values":     {append(ourValue(5), ourValue(6)...), consul.Flags},
		"upper-case owner":    {[]byte(`{"token":5,"owner":"00112233445566778899AABBCCDDEEFF"}`), consul.Flags},
		"negative lock-delay": {[]byte(`{"token":5,"owner":"00112233445566778899aabbccddeeff","lock_delay_ms":-1}`), consul.Flags},
		"huge session ttl":    {[]byte(`{"token":5,"owner":"00112233445566778899aabbccddeeff","session_ttl_ms":9000000000000}`), consul.Flags},
		"token out of range":  {[]byte(`{"token":18446744073709551616,"owner":"00112233445566778899aabbccddeeff"}`), consul.Flags},
	} {
		key := uniqueKey(t, strings.ReplaceAll(name, " ", "-"))
		kvName := plant(key, c.v, c.flags)
		_, err := st.Acquire(tctx(t), areq(key, time.Second))
		var fe *leasehold.ForeignRecordError
		var se *leasehold.StoreError
		if !errors.As(err, &fe) || !errors.As(err, &se) || !errors.Is(err, leasehold.ErrForeignRecord) || !strings.Contains(fe.Object, kvName) {
			t.Errorf("%s: acquire: %v; want a ForeignRecordError naming %s in a StoreError", name, err, kvName)
		}
		if kv, _, _ := cli.KV().Get(kvName, nil); kv == nil || string(kv.Value) != string(c.v) || kv.Session != "" {
			t.Errorf("%s: the foreign entry changed: %+v", name, kv)
		}
	}

	top := uniqueKey(t, "top")
	plant(top, ourValue(math.MaxUint64), consul.Flags)
	if _, err := st.Acquire(tctx(t), areq(top, time.Second)); !errors.Is(err, leasehold.ErrTokensExhausted) {
		t.Errorf("acquire over a token of 2^64-1: %v; want ErrTokensExhausted", err)
	}
	if _, err := st.Holder(tctx(t), top); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("the refused key is held: %v", err)
	}
	near := uniqueKey(t, "near")
	plant(near, ourValue(math.MaxUint64-1), consul.Flags)
	g, err := st.Acquire(tctx(t), areq(near, time.Second))
	if err != nil || g.Token != math.MaxUint64 {
		t.Fatalf("acquire over a token of 2^64-2: token %d, %v; want 2^64-1", g.Token, err)
	}
	if err := st.Release(tctx(t), g); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Acquire(tctx(t), areq(near, time.Second)); !errors.Is(err, leasehold.ErrTokensExhausted) {
		t.Errorf("the next acquire: %v; want ErrTokensExhausted", err)
	}
	other, err := st.Acquire(tctx(t), areq(uniqueKey(t, "other"), time.Second))
	if err != nil || other.Token >= math.MaxUint64/2 {
		t.Errorf("another key after the planted ones: token %d, %v; want a clock-floored token", other.Token, err)
	}
	_ = st.Release(tctx(t), other)
}

// TestLegacyReleasedEntry: a key released by the version before tokens were
// stored in values (unlocked, flags 0, empty value) can be acquired again,
// with a token above its ModifyIndex (the old version's last token), and
// released and acquired once more.
func TestLegacyReleasedEntry(t *testing.T) {
	c := testserver.NewConsul(t, testserver.ConsulOptions{})
	st := newStore(t, c, 0)
	cli := consulClient(t, c, 0)
	key := uniqueKey(t, "legacy")
	name := st.KeyOf(key)
	if _, err := cli.KV().Put(&api.KVPair{Key: name, Flags: 0}, nil); err != nil {
		t.Fatal(err)
	}
	kv, _, err := cli.KV().Get(name, nil)
	if err != nil || kv == nil || kv.Session != "" || kv.Flags != 0 || len(kv.Value) != 0 {
		t.Fatalf("planted entry: %+v, %v", kv, err)
	}
	g, err := st.Acquire(tctx(t), areq(key, time.Second))
	if err != nil {
		t.Fatalf("acquire over a legacy released entry: %v", err)
	}
	if g.Token <= kv.ModifyIndex {
		t.Errorf("token %d; want above the entry's ModifyIndex %d", g.Token, kv.ModifyIndex)
	}
	if err := st.Release(tctx(t), g); err != nil {
		t.Fatal(err)
	}
	g2, err := st.Acquire(tctx(t), areq(key, time.Second))
	if err != nil || g2.Token <= g.Token {
		t.Fatalf("acquire after the release: token %d after %d, %v", g2.Token, g.Token, err)
	}
	_ = st.Release(tctx(t), g2)
}
