package kube_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/kube"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// adminLeases returns the admin's Lease client for namespace ns.
func adminLeases(t testing.TB, k *testserver.Kube, ns string) coordclient.LeaseInterface {
	t.Helper()
	c, err := coordclient.NewForConfig(tokenConfig(k, k.AdminToken))
	if err != nil {
		t.Fatal(err)
	}
	return c.Leases(ns)
}

// wantErr fails t unless err is a *leasehold.StoreError that matches
// target (if set) and whose message says every one of words.
func wantErr(t *testing.T, what string, err, target error, words ...string) {
	t.Helper()
	var se *leasehold.StoreError
	if !errors.As(err, &se) || se.Store != kube.Name {
		t.Fatalf("%s: got %v, want a *leasehold.StoreError of the %s store", what, err, kube.Name)
	}
	if target != nil && !errors.Is(err, target) {
		t.Errorf("%s: %v does not match %v", what, err, target)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: %q does not say %q", what, err, w)
		}
	}
}

func testBadInput(t *testing.T, k *testserver.Kube) {
	_, err := kube.New(ctxT(t), tokenConfig(k, k.AdminToken), "no-such-namespace", nil)
	wantErr(t, "missing namespace", err, nil, "no-such-namespace", "does not exist")

	_, err = kube.New(ctxT(t), tokenConfig(k, "not-a-token"), "badinput", nil)
	wantErr(t, "refused credentials", err, nil, "badinput", "credentials refused")

	_, err = kube.New(ctxT(t), tokenConfig(k, k.NoRightsToken), "badinput", nil)
	wantErr(t, "user without RBAC rights", err, nil, "badinput", "RBAC denied", "create", testserver.KubeNoRightsUser)

	s := open(t, k, "badinput")
	_, err = s.Acquire(ctxT(t), leasehold.AcquireRequest{Key: "short", Owner: leasehold.NewOwnerID(), TTL: 500 * time.Millisecond})
	if !errors.Is(err, leasehold.ErrInvalidTTL) {
		t.Errorf("acquire with a 500 ms TTL: got %v, want ErrInvalidTTL", err)
	}

	// Someone else's Lease at the key's name: refused, naming it, and
	// left as it was.
	leases := adminLeases(t, k, "badinput")
	holder := "their-controller"
	theirs := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: kube.LeaseName("theirs")},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}
	made, err := leases.Create(ctxT(t), theirs, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Acquire(ctxT(t), leasehold.AcquireRequest{Key: "theirs", Owner: leasehold.NewOwnerID(), TTL: time.Minute})
	wantErr(t, "acquire over someone else's Lease", err, leasehold.ErrForeignRecord, kube.LeaseName("theirs"), "badinput", "someone else's")
	_, err = s.Holder(ctxT(t), "theirs")
	wantErr(t, "holder of someone else's Lease", err, leasehold.ErrForeignRecord, kube.LeaseName("theirs"))
	after, err := leases.Get(ctxT(t), made.Name, metav1.GetOptions{})
	if err != nil || after.ResourceVersion != made.ResourceVersion {
		t.Fatalf("someone else's Lease was changed: %v, resourceVersion %s -> %s", err, made.ResourceVersion, after.ResourceVersion)
	}

	// A planted record with a token above its resourceVersion (no store
	// writes that) is refused rather than taken as a floor.
	planted := theirs.DeepCopy()
	planted.Name = kube.LeaseName("planted")
	planted.Annotations = map[string]string{
		"leasehold-go.github.io/format": "1", "leasehold-go.github.io/key": "planted",
		"leasehold-go.github.io/state": "released", "leasehold-go.github.io/token": "18446744073709551615",
		"leasehold-go.github.io/write": "0123456789abcdef",
	}
	if _, err := leases.Create(ctxT(t), planted, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Acquire(ctxT(t), leasehold.AcquireRequest{Key: "planted", Owner: leasehold.NewOwnerID(), TTL: time.Minute})
	wantErr(t, "acquire over a planted token", err, leasehold.ErrForeignRecord, kube.LeaseName("planted"), "above its resourceVersion")
}

// testDeleted checks that deleting a key's Lease (someone else's doing),
// released or held, cannot make a token repeat, and that a holder whose
// Lease was deleted and taken again is refused.
func testDeleted(t *testing.T, k *testserver.Kube) {
	s := open(t, k, "tokens")
	leases := adminLeases(t, k, "tokens")
	g1 := acquire(t, s, "k", time.Minute)
	if err := s.Release(ctxT(t), g1); err != nil {
		t.Fatal(err)
	}
	if err := leases.Delete(ctxT(t), kube.LeaseName("k"), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	g2 := acquire(t, s, "k", time.Minute)
	if g2.Token <= g1.Token {
		t.Fatalf("after the released Lease was deleted: token %d, not above %d", g2.Token, g1.Token)
	}
	if err := leases.Delete(ctxT(t), kube.LeaseName("k"), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	g3 := acquire(t, s, "k", time.Minute)
	if g3.Token <= g2.Token {
		t.Fatalf("after the held Lease was deleted: token %d, not above %d", g3.Token, g2.Token)
	}
	if _, err := s.Renew(ctxT(t), g2); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("renew of the grant whose Lease was deleted and taken: got %v, want ErrNotHeld", err)
	}
	if err := s.Release(ctxT(t), g2); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("release of the grant whose Lease was deleted and taken: got %v, want ErrNotHeld", err)
	}
	if h, err := s.Holder(ctxT(t), "k"); err != nil || h.Token != g3.Token {
		t.Fatalf("Holder = %+v, %v; want token %d", h, err, g3.Token)
	}
	_ = leases.Delete(ctxT(t), kube.LeaseName("k"), metav1.DeleteOptions{})
	if _, err := s.Renew(ctxT(t), g3); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("renew after the Lease was deleted: got %v, want ErrNotHeld", err)
	}
	if _, err := leases.Get(ctxT(t), kube.LeaseName("k"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused renew wrote the Lease back: %v", err)
	}
}

// testAuth uses a client certificate, and the kubeconfig URL form.
func testAuth(t *testing.T, k *testserver.Kube) {
	s, err := kube.New(ctxT(t), certConfig(k), "auth", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	g := acquire(t, s, "by-cert", time.Minute)
	if err := s.Release(ctxT(t), g); err != nil {
		t.Fatal(err)
	}
	path, err := k.Kubeconfig("auth")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ url, fail string }{
		{"kube:///?kubeconfig=" + path + "&context=cert", ""},
		{"kube:///auth?kubeconfig=" + path, ""},
		{"kube:///auth?kubeconfig=" + path + "&context=norights", "RBAC denied"},
		{"kube:///auth?kubeconfig=" + path + "&context=nosuch", "nosuch"},
	} {
		u, err := kube.OpenURL(ctxT(t), c.url)
		if c.fail != "" {
			wantErr(t, c.url, err, nil, c.fail)
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.url, err)
		}
		g := acquire(t, u, "by-url", time.Minute)
		if err := u.Release(ctxT(t), g); err != nil {
			t.Fatal(err)
		}
		_ = u.Close()
	}
}

// testClocks checks that no wall clock ends a lease: a holder whose
// renewTime says it renewed long ago (a clock far behind) is still held
// for a store that just looked, and ends for it only once it has seen the
// Lease unchanged for the TTL on its own clock.
func testClocks(t *testing.T, k *testserver.Kube) {
	a, b := open(t, k, "clocks"), open(t, k, "clocks")
	leases := adminLeases(t, k, "clocks")
	g := acquire(t, a, "k", 2*time.Second)
	past := metav1.NewMicroTime(time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC))
	l, err := leases.Get(ctxT(t), kube.LeaseName("k"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l.Spec.RenewTime, l.Spec.AcquireTime = &past, &past
	if _, err := leases.Update(ctxT(t), l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now() // before the first look: the rival's clock starts after it
	_, err = b.Acquire(ctxT(t), leasehold.AcquireRequest{Key: "k", Owner: leasehold.NewOwnerID(), TTL: time.Minute})
	var he *leasehold.HeldError
	if !errors.As(err, &he) || he.Token != g.Token || he.Remaining > 2*time.Second {
		t.Fatalf("a rival's first look at a lease whose renewTime is 2001: got %v, want HeldError with token %d and at most 2 s left", err, g.Token)
	}
	for {
		g2, err := b.Acquire(ctxT(t), leasehold.AcquireRequest{Key: "k", Owner: leasehold.NewOwnerID(), TTL: time.Minute})
		if err == nil {
			if waited := time.Since(start); waited < 2*time.Second {
				t.Fatalf("the rival took the lease %s after first seeing it, before its 2 s TTL", waited)
			}
			if g2.Token <= g.Token {
				t.Fatalf("token %d after takeover, not above %d", g2.Token, g.Token)
			}
			return
		}
		if !errors.As(err, &he) {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
