package leasehold_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
)

// portableStore is a memory store that says its grants are portable, as a
// store on a server does.
type portableStore struct{ leasehold.Store }

func (s portableStore) Info() leasehold.Info {
	i := s.Store.Info()
	i.PortableGrants = true
	return i
}

func TestClaimOutlivesTheClient(t *testing.T) {
	ctx := context.Background()
	st := portableStore{memory.New(nil)}
	c, err := leasehold.New(st, &leasehold.Options{TTL: time.Minute, Label: "claimer"})
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.Claim(ctx, "job", leasehold.AcquireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	h, err := st.Holder(ctx, "job")
	if err != nil || h.Token != g.Token || h.Label != "claimer" {
		t.Fatalf("after the client closed, Holder = %+v, %v; want token %d held by claimer", h, err, g.Token)
	}
	c2, _ := leasehold.New(st, nil)
	defer c2.Close()
	if _, err := c2.Claim(ctx, "job", leasehold.AcquireOptions{Wait: 20 * time.Millisecond}); !errors.Is(err, leasehold.ErrHeld) {
		t.Fatalf("second claim: %v, want ErrHeld", err)
	}
	if err := st.Release(ctx, g); err != nil {
		t.Fatalf("release of the claimed grant through the store: %v", err)
	}
}

func TestClaimRefusesNonPortableStores(t *testing.T) {
	st := memory.New(nil)
	c, _ := leasehold.New(st, nil)
	defer c.Close()
	if _, err := c.Claim(context.Background(), "job", leasehold.AcquireOptions{}); !errors.Is(err, leasehold.ErrNotPortable) {
		t.Fatalf("claim on memory: %v, want ErrNotPortable", err)
	}
	if _, err := st.Holder(context.Background(), "job"); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("a refused claim left the key held: %v", err)
	}
}
