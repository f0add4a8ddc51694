package kube_test

import (
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/kube"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// testWritesUntracked: every write of an existing Lease (acquire, renew,
// release) leaves it without managedFields, so that the apiserver does
// no field management for the store's Leases (about 1 ms of its CPU per
// write, and twice the object's size). Before each write another client
// gives the Lease a field manager, as a kubectl edit would.
func testWritesUntracked(t *testing.T, k *testserver.Kube) {
	s := open(t, k, "tokens")
	leases := adminLeases(t, k, "tokens")
	const key = "untracked"
	name := kube.LeaseName(key)
	track := func() {
		t.Helper()
		l, err := leases.Get(ctxT(t), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		l.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate,
			APIVersion: "coordination.k8s.io/v1", FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:leaseDurationSeconds":{}}}`)}}
		if l, err = leases.Update(ctxT(t), l, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if len(l.ManagedFields) == 0 {
			t.Fatal("the apiserver dropped the managedFields the test set: the test cannot fail")
		}
	}
	g := acquire(t, s, key, time.Minute) // a create: the apiserver tracks it
	steps := []struct {
		what string
		do   func() error
	}{
		{"renew", func() error { _, err := s.Renew(ctxT(t), g); return err }},
		{"release", func() error { return s.Release(ctxT(t), g) }},
		{"acquire", func() (err error) {
			g, err = s.Acquire(ctxT(t), leasehold.AcquireRequest{Key: key, Owner: leasehold.NewOwnerID(), Label: "test", TTL: time.Minute})
			return err
		}},
		{"release of a rebuilt grant", func() error {
			return s.Release(ctxT(t), leasehold.Grant{Key: g.Key, Owner: g.Owner, Token: g.Token})
		}},
	}
	for _, st := range steps {
		track()
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.what, err)
		}
		l, err := leases.Get(ctxT(t), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.ManagedFields) != 0 {
			t.Errorf("%s: the Lease has managedFields %v, want none (the store's writes reset them)", st.what, l.ManagedFields)
		}
	}
}
