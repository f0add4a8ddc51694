package kube

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/leasehold-go/leasehold"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// maxTries bounds the read-and-write rounds of one call that lose their
// compare-and-swap to other writers of the same Lease.
const maxTries = 32

// errRVNotNumber is the cause when the server's resourceVersions are not
// the comparable integers the token floor needs.
var errRVNotNumber = errors.New("the server's resourceVersion is not a comparable integer (Kubernetes 1.35+ on etcd)")

// grantState is a grant's Private value: the resourceVersion of the
// store's last write of the Lease, so that a renewal or release of a
// grant made by this process is one request, and the Lease's
// leaseTransitions as the grant's acquire wrote them (a renewal keeps
// them), which the release's update writes again. It is used only for the
// key, owner and token it was made for.
type grantState struct {
	key, owner  string
	token       uint64
	transitions *int32
	rv          atomic.Pointer[string]
}

func newState(g leasehold.Grant, l *coordinationv1.Lease) *grantState {
	st := &grantState{key: g.Key, owner: g.Owner, token: g.Token, transitions: l.Spec.LeaseTransitions}
	rv := l.ResourceVersion
	st.rv.Store(&rv)
	return st
}

// remember keeps rv for the grant's next call; st may be nil.
func (st *grantState) remember(rv string) {
	if st != nil {
		st.rv.Store(&rv)
	}
}

// stateOf returns g's state and the resourceVersion to write on ("" to
// read first).
func stateOf(g leasehold.Grant) (*grantState, string) {
	st, _ := g.Private.(*grantState)
	if st == nil || st.key != g.Key || st.owner != g.Owner || st.token != g.Token {
		return nil, ""
	}
	return st, *st.rv.Load()
}

// read gets key's Lease and its record; both nil when it is absent.
func (s *Store) read(ctx context.Context, name, key string) (*coordinationv1.Lease, *record, error) {
	l, err := s.leases.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	r, err := parseRecord(s.where(name), key, l.ResourceVersion, l.Annotations)
	if err != nil {
		return nil, nil, err
	}
	return l, &r, nil
}

// Acquire reads key's Lease; if it is absent, released, or judged expired
// (its resourceVersion seen unchanged for its TTL by this store), it
// writes the grant: a create, or an update on the resourceVersion read, so
// that of racing acquirers exactly one write lands. A key this store
// released last is written at once, without the read, on the
// resourceVersion its release left (claimReleased).
func (s *Store) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	if err := leasehold.CheckAcquire(req, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	if err := s.checkOpen("acquire"); err != nil {
		return leasehold.Grant{}, err
	}
	name := objectName(req.Key)
	if g, ok, err := s.claimReleased(ctx, req, name); err != nil || ok {
		return g, err
	}
	for range maxTries {
		cur, rec, err := s.read(ctx, name, req.Key)
		if err != nil {
			return leasehold.Grant{}, s.err(ctx, "acquire", name, err)
		}
		if rec != nil && rec.Held {
			if rec.Owner == ownerHash(req.Owner) {
				// This attempt's own write, whose reply was lost.
				return s.grant(req, rec.Token, cur), nil
			}
			if rem := s.obs.remaining(name, cur.ResourceVersion, rec.TTL, time.Now()); rem > 0 {
				return leasehold.Grant{}, &leasehold.HeldError{Key: req.Key, Label: rec.Label, Token: rec.Token, Remaining: rem}
			}
		}
		g, ok, err := s.claim(ctx, req, cur, rec)
		if err != nil || ok {
			return g, err
		}
	}
	// Every round lost its write to another acquirer: the key is busy.
	return leasehold.Grant{}, &leasehold.HeldError{Key: req.Key}
}

// claimReleased writes req's grant over the Lease this store's release of
// Lease name left, if it remembers one, on its resourceVersion: the update
// lands only if nobody wrote the Lease since, so the Lease is then still
// released with the token remembered, as a read would have shown. ok is
// false when nothing is remembered or another write came first (the
// caller then reads).
func (s *Store) claimReleased(ctx context.Context, req leasehold.AcquireRequest, name string) (g leasehold.Grant, ok bool, err error) {
	cur := s.rel.take(name)
	if cur == nil {
		return g, false, nil
	}
	rec, err := parseRecord(s.where(name), req.Key, cur.ResourceVersion, cur.Annotations)
	if err != nil || rec.Held {
		return g, false, nil // not what a release leaves: read it
	}
	return s.claim(ctx, req, cur, &rec)
}

// claim writes req's grant over cur (nil: absent). ok is false when
// another write came first.
func (s *Store) claim(ctx context.Context, req leasehold.AcquireRequest, cur *coordinationv1.Lease, rec *record) (g leasehold.Grant, ok bool, err error) {
	name := objectName(req.Key)
	var last uint64
	var floor string
	if cur != nil {
		last, floor = rec.Token, cur.ResourceVersion
	} else if floor, err = s.listRV(ctx); err != nil {
		return g, false, s.err(ctx, "acquire", name, err)
	}
	if _, err := resourceversion.CompareResourceVersion(floor, floor); err != nil {
		return g, false, s.err(ctx, "acquire", name, fmt.Errorf("%w: %q", errRVNotNumber, floor))
	}
	tok, ok := nextToken(last, floor)
	if !ok {
		return g, false, s.err(ctx, "acquire", name, fmt.Errorf("key %q: its token would pass %d, the largest a token can be: %w",
			req.Key, uint64(math.MaxUint64), leasehold.ErrTokensExhausted))
	}
	r := record{Key: req.Key, Held: true, Owner: ownerHash(req.Owner), Token: tok, TTL: req.TTL, Label: req.Label, Write: nonce()}
	l := leaseObject(name, r, cur)
	var done *coordinationv1.Lease
	if cur == nil {
		done, err = s.leases.Create(ctx, l, metav1.CreateOptions{})
	} else {
		done, err = s.leases.Update(ctx, l, metav1.UpdateOptions{})
	}
	switch {
	case err == nil:
		s.obs.forget(name)
		return s.grant(req, tok, done), true, nil
	case apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) || (cur != nil && apierrors.IsNotFound(err)):
		return g, false, nil
	}
	return g, false, s.err(ctx, "acquire", name, err)
}

// listRV returns the resourceVersion of a consistent list of the
// namespace's Leases: at least that of every write to Leases before it.
func (s *Store) listRV(ctx context.Context) (string, error) {
	l, err := s.leases.List(ctx, metav1.ListOptions{Limit: 1, LabelSelector: labelOwner + "=" + labelValue})
	if err != nil {
		return "", err
	}
	return l.ResourceVersion, nil
}

// leaseObject returns the Lease that records r, replacing cur (nil: a
// new Lease). Its spec says the same for other readers (kubectl,
// client-go): holderIdentity the label (or "leasehold"), the duration in
// whole seconds rounded up, the times by this host's clock (never read by
// the store), and leaseTransitions counted on.
func leaseObject(name string, r record, cur *coordinationv1.Lease) *coordinationv1.Lease {
	now := metav1.NewMicroTime(time.Now())
	holder := r.Label
	if holder == "" {
		holder = "leasehold"
	}
	secs := int32((r.TTL + time.Second - 1) / time.Second)
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{labelOwner: labelValue}, Annotations: r.annotations(),
			ManagedFields: untracked()},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs,
			AcquireTime: &now, RenewTime: &now},
	}
	var transitions int32
	if cur != nil {
		l.ResourceVersion = cur.ResourceVersion
		if t := cur.Spec.LeaseTransitions; t != nil && *t < math.MaxInt32 {
			transitions = *t + 1
		}
	}
	l.Spec.LeaseTransitions = &transitions
	return l
}

// untracked is the managedFields of every Lease the store writes: one
// empty entry, which tells the apiserver to drop the Lease's
// managedFields, and then, on an update of a Lease that has none, to skip
// field management (server-side apply's bookkeeping, which the store never
// reads). Tracked, each write costs the apiserver about 1 ms more CPU and
// doubles the object it stores and answers (kube/bench BenchmarkRequests).
// A create is tracked all the same (the apiserver tracks every create); its
// key's next write drops them.
func untracked() []metav1.ManagedFieldsEntry { return []metav1.ManagedFieldsEntry{{}} }

// grant returns req's grant of token tok, written in Lease l.
func (s *Store) grant(req leasehold.AcquireRequest, tok uint64, l *coordinationv1.Lease) leasehold.Grant {
	g := leasehold.Grant{Key: req.Key, Owner: req.Owner, Label: req.Label, Token: tok, TTL: req.TTL}
	g.Private = newState(g, l)
	return g
}

// Holder reads key's Lease and reports its holder, unless it is released
// or this store has seen it unchanged for its TTL. Remaining is the TTL
// less the time this store has seen the Lease unchanged: an upper bound.
func (s *Store) Holder(ctx context.Context, key string) (leasehold.Holder, error) {
	if err := leasehold.CheckHolder(key); err != nil {
		return leasehold.Holder{}, err
	}
	if err := s.checkOpen("holder"); err != nil {
		return leasehold.Holder{}, err
	}
	name := objectName(key)
	cur, rec, err := s.read(ctx, name, key)
	if err != nil {
		return leasehold.Holder{}, s.err(ctx, "holder", name, err)
	}
	if rec == nil || !rec.Held {
		return leasehold.Holder{}, leasehold.ErrNotHeld
	}
	rem := s.obs.remaining(name, cur.ResourceVersion, rec.TTL, time.Now())
	if rem <= 0 {
		return leasehold.Holder{}, leasehold.ErrNotHeld
	}
	return leasehold.Holder{Key: key, Label: rec.Label, Token: rec.Token, Remaining: rem}, nil
}
