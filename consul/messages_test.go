package consul_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

// TestMessagesSayWhatIsKnown: a lock-delay refusal names the lock-delay
// the invalidated session set (not Consul's 60 s maximum), and a holder
// read by a store that does not keep the grant has no Remaining but a
// MaxRemaining: twice the session's TTL plus its lock-delay.
func TestMessagesSayWhatIsKnown(t *testing.T) {
	c := testserver.NewConsul(t, testserver.ConsulOptions{})
	a, b := newStore(t, c, 0), newStore(t, c, 0)
	cli := consulClient(t, c, 0)

	k := uniqueKey(t, "held")
	g, err := a.Acquire(tctx(t), areq(k, 2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if h, err := a.Holder(tctx(t), k); err != nil || h.Remaining <= 0 || h.MaxRemaining != 0 {
		t.Errorf("holder read by the granting store: %+v, %v; want Remaining > 0", h, err)
	}
	h, err := b.Holder(tctx(t), k)
	if err != nil || h.Remaining != 0 || h.MaxRemaining != 22*time.Second {
		t.Errorf("holder read by another store: %+v, %v; want Remaining 0, MaxRemaining 22s (2 x the 10 s session + the 2 s lock-delay)", h, err)
	}

	// An early invalidation (the session destroyed): the entry is under
	// the lock-delay of the session that held it, 2 s.
	kv := entry(t, cli, a, k)
	if _, err := cli.Session().Destroy(kv.Session, nil); err != nil {
		t.Fatal(err)
	}
	_, err = b.Acquire(tctx(t), areq(k, 2*time.Second))
	var he *leasehold.HeldError
	if !errors.As(err, &he) || !strings.Contains(he.Label, "lock-delay") || !strings.Contains(he.Label, "2s, as that session set it") {
		t.Errorf("acquire during the lock-delay: %v; want a HeldError naming the session's 2s lock-delay", err)
	}
	t.Logf("during the lock-delay: %v", err)
	_ = a.Release(tctx(t), g)
}
