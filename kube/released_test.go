package kube_test

import (
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/kube"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordv1 "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// requestCounter counts the HTTP requests of a client, by method.
type requestCounter struct{ get, put, other atomic.Int64 }

func (c *requestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		switch r.Method {
		case http.MethodGet:
			c.get.Add(1)
		case http.MethodPut:
			c.put.Add(1)
		default:
			c.other.Add(1)
		}
		return rt.RoundTrip(r)
	})
}

// take returns the counts so far (GET, PUT, any other) and starts again.
func (c *requestCounter) take() [3]int64 {
	return [3]int64{c.get.Swap(0), c.put.Swap(0), c.other.Swap(0)}
}

// countedStore returns a store on namespace tokens of k as the admin,
// closed when t ends, and the counter of its requests.
func countedStore(t *testing.T, k *testserver.Kube) (*kube.Store, *requestCounter) {
	t.Helper()
	c := &requestCounter{}
	cfg := tokenConfig(k, k.AdminToken)
	cfg.WrapTransport = c.wrap
	a, err := kube.New(ctxT(t), cfg, "tokens", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a, c
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// testReleasedWritesAtOnce: the acquire of a key this store released last
// is one request, an update on the resourceVersion the release left; when
// another store wrote the Lease since, that update fails and the acquire
// reads, so the grant's token is still above the other store's.
func testReleasedWritesAtOnce(t *testing.T, k *testserver.Kube) {
	a, c := countedStore(t, k)
	b := open(t, k, "tokens")
	release := func(s leasehold.Store, g leasehold.Grant) {
		t.Helper()
		if err := s.Release(ctxT(t), g); err != nil {
			t.Fatal(err)
		}
	}
	// acquireCounted acquires the key with a and checks the requests it
	// sent and that its token is above after's.
	acquireCounted := func(after leasehold.Grant, want [3]int64, what string) leasehold.Grant {
		t.Helper()
		c.take()
		g := acquire(t, a, "released", time.Minute)
		if got := c.take(); got != want || g.Token <= after.Token {
			t.Fatalf("acquire %s: token %d after %d, requests (GET, PUT, other) %v, want a higher token and %v",
				what, g.Token, after.Token, got, want)
		}
		return g
	}
	g1 := acquire(t, a, "released", time.Minute)
	release(a, g1)
	g2 := acquireCounted(g1, [3]int64{0, 1, 0}, "after this store's release (an update, no read)")
	release(a, g2)
	g3 := acquire(t, b, "released", time.Minute) // a's memory of the Lease is now stale
	release(b, g3)
	g4 := acquireCounted(g3, [3]int64{1, 2, 0}, "after another store's grant and release (a refused update, a read, an update)")
	release(a, g4)
}

// testReleaseIsUpdate: a release is one request, an UPDATE of the Lease
// the grant's last write left (no merge PATCH, no read), which keeps the
// Lease's label and leaseTransitions; when another write changed the
// Lease's resourceVersion since (here a renewal of the same grant without
// its memory), that update is refused and the release reads and updates
// again. Either way the key is then free and its next token higher.
func testReleaseIsUpdate(t *testing.T, k *testserver.Kube) {
	a, c := countedStore(t, k)
	leases, err := coordv1.NewForConfig(tokenConfig(k, k.AdminToken))
	if err != nil {
		t.Fatal(err)
	}
	const key = "release-update"
	releaseCounted := func(g leasehold.Grant, want [3]int64, what string) {
		t.Helper()
		c.take()
		if err := a.Release(ctxT(t), g); err != nil {
			t.Fatalf("release %s: %v", what, err)
		}
		if got := c.take(); got != want {
			t.Fatalf("release %s: requests (GET, PUT, other) %v, want %v", what, got, want)
		}
		l, err := leases.Leases("tokens").Get(ctxT(t), kube.LeaseName(key), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Holder(ctxT(t), key); !errors.Is(err, leasehold.ErrNotHeld) {
			t.Fatalf("release %s: Holder says %v, want ErrNotHeld", what, err)
		}
		if l.Labels["app.kubernetes.io/managed-by"] != "leasehold" || l.Spec.LeaseTransitions == nil || l.Spec.HolderIdentity != nil {
			t.Fatalf("release %s: the released Lease has labels %v, leaseTransitions %v, holderIdentity %v; want the store's label, the count kept and no holder",
				what, l.Labels, l.Spec.LeaseTransitions, l.Spec.HolderIdentity)
		}
	}
	g1 := acquire(t, a, key, time.Minute)
	releaseCounted(g1, [3]int64{0, 1, 0}, "on the grant's last write")
	g2 := acquire(t, a, key, time.Minute)
	bare := g2
	bare.Private = nil // a renewal that reads first: the grant's memory is now stale
	if _, err := a.Renew(ctxT(t), bare); err != nil {
		t.Fatal(err)
	}
	releaseCounted(g2, [3]int64{1, 2, 0}, "after another write (a refused update, a read, an update)")
	g3 := acquire(t, a, key, time.Minute)
	if g3.Token <= g2.Token {
		t.Fatalf("token %d after a release, not above %d", g3.Token, g2.Token)
	}
	// A grant rebuilt from key, owner and token, as `leasehold release`
	// makes it in a process of its own: no TTL and no memory of the Lease.
	// The release reads, then updates, keeping the Lease's duration (the
	// apiserver refuses a leaseDurationSeconds of 0).
	rebuilt := leasehold.Grant{Key: g3.Key, Owner: g3.Owner, Token: g3.Token}
	releaseCounted(rebuilt, [3]int64{1, 1, 0}, "of a grant rebuilt from key, owner and token")
	l, err := leases.Leases("tokens").Get(ctxT(t), kube.LeaseName(key), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := l.Spec.LeaseDurationSeconds; d == nil || *d != 60 {
		t.Fatalf("released by a rebuilt grant: leaseDurationSeconds %v, want the grant's 60 kept", d)
	}
}
