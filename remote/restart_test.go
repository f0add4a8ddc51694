package remote_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/servetest"
	"github.com/leasehold-go/leasehold/memory"
)

func acquireReq(key string) leasehold.AcquireRequest {
	return leasehold.AcquireRequest{Key: key, Owner: "0123456789abcdef0123456789abcdef", Label: "test", TTL: time.Minute}
}

// TestRestartRefusesKeptGrant: a grant the server kept under a handle (a
// backend without PortableGrants) is not renewable or releasable after the
// server restarted: ErrNotHeld.
func TestRestartRefusesKeptGrant(t *testing.T) {
	srv := servetest.Start(t, memory.New(nil))
	st := srv.Open(t)
	g, err := st.Acquire(context.Background(), acquireReq("k"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Renew(context.Background(), g); err != nil {
		t.Fatalf("renew before the restart: %v", err)
	}
	srv.Restart(t)
	if _, err := st.Renew(context.Background(), g); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("renew after the restart: %v, want ErrNotHeld", err)
	}
	if err := st.Release(context.Background(), g); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("release after the restart: %v, want ErrNotHeld", err)
	}
}

// TestRestartCancelsKeptLease: a client's lease on such a grant is lost
// when the server restarts: its next renewal is refused, its context ends
// with ErrLost for ErrNotHeld.
func TestRestartCancelsKeptLease(t *testing.T) {
	srv := servetest.Start(t, memory.New(nil))
	c, err := leasehold.New(srv.Open(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	l, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	srv.Restart(t)
	<-l.Done()
	if err := l.Err(); !errors.Is(err, leasehold.ErrLost) || !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("the lease ended with %v, want ErrLost for ErrNotHeld", err)
	}
}
