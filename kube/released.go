package kube

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leasehold-go/leasehold/internal/objtoken"
)

// releasedLeases remember the Leases this store released, as its release
// left them, so that the next acquire of the key can write at once (an
// update on the remembered resourceVersion) instead of reading first. The
// compare-and-swap makes that safe: the update lands only if the Lease is
// still exactly what was remembered (released, with its token), the state
// a read would have shown; any other write since makes it fail with a
// conflict, and the acquire then reads, as it does without a memory. The
// memory is bounded (objtoken.MaxReleased, shared with the azblob and s3
// stores); forgetting one is always safe: the next acquire reads first.
type releasedLeases struct {
	m objtoken.Released[*coordinationv1.Lease]
}

func newReleasedLeases() *releasedLeases { return &releasedLeases{} }

// put remembers l, as the store's release of Lease name left it: what an
// acquire writes on (its resourceVersion, its annotations, the store's
// record, and its leaseTransitions), not the rest (managedFields, times).
func (r *releasedLeases) put(name string, l *coordinationv1.Lease) {
	if l == nil {
		return
	}
	r.m.Put(name, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: l.Name, ResourceVersion: l.ResourceVersion, Annotations: l.Annotations},
		Spec:       coordinationv1.LeaseSpec{LeaseTransitions: l.Spec.LeaseTransitions},
	})
}

// take returns the Lease remembered for name and forgets it (nil: none),
// so that it is tried once.
func (r *releasedLeases) take(name string) *coordinationv1.Lease {
	l, _ := r.m.Take(name)
	return l
}
