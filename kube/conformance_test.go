package kube_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/kube"
	"github.com/leasehold-go/leasehold/leasetest"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
)

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// tokenConfig returns a client configuration for k with a bearer token.
func tokenConfig(k *testserver.Kube, token string) *rest.Config {
	return &rest.Config{Host: k.Endpoint(), BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAFile: k.CAFile}}
}

// certConfig returns a client configuration for k with the client
// certificate of testserver.KubeCertUser.
func certConfig(k *testserver.Kube) *rest.Config {
	return &rest.Config{Host: k.Endpoint(), TLSClientConfig: rest.TLSClientConfig{
		CAFile: k.CAFile, CertFile: k.ClientCert, KeyFile: k.ClientKey}}
}

// createNamespaces makes namespaces as the admin.
func createNamespaces(t testing.TB, k *testserver.Kube, names ...string) {
	t.Helper()
	c, err := corev1client.NewForConfig(tokenConfig(k, k.AdminToken))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		_, err := c.Namespaces().Create(ctxT(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

// open returns a store on namespace ns of k as the admin, closed when t
// ends.
func open(t testing.TB, k *testserver.Kube, ns string) *kube.Store {
	t.Helper()
	s, err := kube.New(ctxT(t), tokenConfig(k, k.AdminToken), ns, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestKube runs the conformance suite and the store's own tests on one
// kube-apiserver (over its own etcd). A missing kube-apiserver fails the
// test: NewKube does not skip.
func TestKube(t *testing.T) {
	k := testserver.NewKube(t, testserver.KubeOptions{})
	createNamespaces(t, k, "conformance", "badinput", "tokens", "auth", "clocks")
	t.Run("conformance", func(t *testing.T) {
		leasetest.Run(t, leasetest.Config{
			Open:       func(t testing.TB) leasehold.Store { return open(t, k, "conformance") },
			Contenders: 16,
			Restart: func(t testing.TB) {
				k.Shutdown(5 * time.Second)
				if err := k.Restart(ctxT(t)); err != nil {
					t.Fatal(err)
				}
			},
		})
	})
	t.Run("bad_input", func(t *testing.T) { testBadInput(t, k) })
	t.Run("deleted_lease_does_not_restart_the_token", func(t *testing.T) { testDeleted(t, k) })
	t.Run("client_certificate_and_kubeconfig_url", func(t *testing.T) { testAuth(t, k) })
	t.Run("holder_wall_clock_not_trusted", func(t *testing.T) { testClocks(t, k) })
	t.Run("released_lease_written_at_once", func(t *testing.T) { testReleasedWritesAtOnce(t, k) })
	t.Run("release_is_an_update", func(t *testing.T) { testReleaseIsUpdate(t, k) })
	t.Run("writes_untracked", func(t *testing.T) { testWritesUntracked(t, k) })
	t.Run("tokens_across_etcd_restart", func(t *testing.T) { testEtcdRestart(t, k) })
}

// testEtcdRestart kills the apiserver's etcd and starts it again: a held
// lease survives (its holder renews it once the apiserver answers again),
// and a later grant's token is above every earlier one.
func testEtcdRestart(t *testing.T, k *testserver.Kube) {
	s := open(t, k, "tokens")
	g1 := acquire(t, s, "etcd-restart", time.Minute)
	k.Etcd.Kill(0)
	if err := k.Etcd.Restart(0); err != nil {
		t.Fatal(err)
	}
	if err := k.Etcd.WaitHealthy(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	var err error
	for range 100 { // the apiserver reconnects to etcd on its own schedule
		if _, err = s.Renew(ctxT(t), g1); err == nil || errors.Is(err, leasehold.ErrNotHeld) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("renew after etcd restarted: %v", err)
	}
	if err := s.Release(ctxT(t), g1); err != nil {
		t.Fatal(err)
	}
	g2 := acquire(t, s, "etcd-restart", time.Minute)
	if g2.Token <= g1.Token {
		t.Fatalf("after etcd restarted: token %d, not above %d", g2.Token, g1.Token)
	}
	if err := s.Release(ctxT(t), g2); err != nil {
		t.Fatal(err)
	}
}

func acquire(t testing.TB, s leasehold.Store, key string, ttl time.Duration) leasehold.Grant {
	t.Helper()
	g, err := s.Acquire(ctxT(t), leasehold.AcquireRequest{Key: key, Owner: leasehold.NewOwnerID(), Label: "test", TTL: ttl})
	if err != nil {
		t.Fatalf("acquire %s: %v", key, err)
	}
	return g
}
