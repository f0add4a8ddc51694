package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/leasehold-go/leasehold"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Renew patches the Lease with the new TTL and renew time, on condition
// that its resourceVersion is still that of the grant's last write (or of
// a read that shows the grant's owner and token). A lease that expired but
// that nobody took since is renewed, keeping its token.
func (s *Store) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	if err := leasehold.CheckRenew(g, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	if err := s.checkOpen("renew"); err != nil {
		return leasehold.Grant{}, err
	}
	ms := strconv.FormatInt(int64((g.TTL+time.Millisecond-1)/time.Millisecond), 10)
	secs := int64((g.TTL + time.Second - 1) / time.Second)
	_, err := s.rewrite(ctx, g, func(ctx context.Context, name, rv, write string, _ *coordinationv1.Lease) (*coordinationv1.Lease, error) {
		body, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": rv, "annotations": map[string]any{annTTL: ms, annWrite: write},
				"managedFields": untracked()},
			"spec": map[string]any{"renewTime": metav1.NewMicroTime(time.Now()), "leaseDurationSeconds": secs},
		})
		if err != nil {
			return nil, err
		}
		return s.leases.Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{})
	})
	if err != nil {
		return leasehold.Grant{}, s.opErr(ctx, "renew", g.Key, err)
	}
	return g, nil
}

// Release updates the Lease to released, keeping its token, on the same
// condition as Renew: the whole object, as the grant's last write left it
// (its resourceVersion and leaseTransitions), or as a read that shows the
// grant's owner and token left it after a conflict; an update is a
// compare-and-swap the apiserver writes at once, where a merge patch is
// read, applied and written. It remembers the released Lease for the key's
// next acquire (see releasedLeases). The store never deletes a Lease.
func (s *Store) Release(ctx context.Context, g leasehold.Grant) error {
	if err := leasehold.CheckRelease(g); err != nil {
		return err
	}
	if err := s.checkOpen("release"); err != nil {
		return err
	}
	st, _ := stateOf(g)
	l, err := s.rewrite(ctx, g, func(ctx context.Context, name, rv, write string, cur *coordinationv1.Lease) (*coordinationv1.Lease, error) {
		var transitions, secs *int32
		if cur != nil {
			transitions, secs = cur.Spec.LeaseTransitions, cur.Spec.LeaseDurationSeconds
		} else if st != nil {
			transitions = st.transitions
		}
		return s.leases.Update(ctx, releasedObject(name, g, rv, write, transitions, secs), metav1.UpdateOptions{})
	})
	if err == nil {
		st.remember("") // a released grant's next call reads first
		s.rel.put(objectName(g.Key), l)
	}
	return s.opErr(ctx, "release", g.Key, err)
}

// releasedObject returns g's Lease name released, to be written on
// resourceVersion rv: the record released with g's token and write id
// write, no holder and no times (as client-go's raw free leaves a Lease),
// leaseTransitions as given, and the duration given (the Lease as a read
// showed it), else that of g's TTL in whole seconds, at least 1 (the
// apiserver refuses 0, and a grant rebuilt from key, owner and token, as
// `leasehold release` makes it in a process of its own, has no TTL).
func releasedObject(name string, g leasehold.Grant, rv, write string, transitions, duration *int32) *coordinationv1.Lease {
	r := record{Key: g.Key, Token: g.Token, Write: write}
	secs := max(int32((g.TTL+time.Second-1)/time.Second), 1)
	if duration != nil && *duration > 0 {
		secs = *duration
	}
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: rv,
			Labels: map[string]string{labelOwner: labelValue}, Annotations: r.annotations(), ManagedFields: untracked()},
		Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: &secs, LeaseTransitions: transitions},
	}
}

func (s *Store) opErr(ctx context.Context, op, key string, err error) error {
	if err == nil || errors.Is(err, leasehold.ErrNotHeld) {
		return err
	}
	return s.err(ctx, op, objectName(key), err)
}

// writeFunc sends one compare-and-swap write of g's Lease name on
// resourceVersion rv, with write id write: cur is the Lease a read just
// showed, nil when rv is the one the grant remembers. It returns the
// Lease as the write left it.
type writeFunc func(ctx context.Context, name, rv, write string, cur *coordinationv1.Lease) (*coordinationv1.Lease, error)

// rewrite sends send for g's Lease if g still holds it: first on the
// resourceVersion the grant remembers, then, after a conflict (another
// writer, or this process's own write whose reply was lost), on that of a
// read that shows g's owner and token. A read that shows the last write's
// id means it landed. It returns the Lease as the write left it.
func (s *Store) rewrite(ctx context.Context, g leasehold.Grant, send writeFunc) (*coordinationv1.Lease, error) {
	name := objectName(g.Key)
	st, rv := stateOf(g)
	var write string // of the last write tried
	for range maxTries {
		var cur *coordinationv1.Lease
		if rv == "" {
			var rec *record
			var err error
			if cur, rec, err = s.read(ctx, name, g.Key); err != nil {
				return nil, err
			}
			if rec != nil && write != "" && rec.Write == write {
				st.remember(cur.ResourceVersion)
				return cur, nil
			}
			if rec == nil || !rec.Held || rec.Owner != ownerHash(g.Owner) || rec.Token != g.Token {
				return nil, leasehold.ErrNotHeld
			}
			rv = cur.ResourceVersion
		}
		write = nonce()
		l, err := send(ctx, name, rv, write, cur)
		switch {
		case err == nil:
			s.obs.forget(name)
			st.remember(l.ResourceVersion)
			return l, nil
		case apierrors.IsNotFound(err):
			return nil, leasehold.ErrNotHeld // deleted: someone else's doing
		case !apierrors.IsConflict(err):
			return nil, err
		}
		rv = ""
	}
	return nil, fmt.Errorf("the Lease changed under %d compare-and-swap writes in a row", maxTries)
}
