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
	_, err := s.rewrite(ctx, g, func(rv, write string) map[string]any {
		return map[string]any{
			"metadata": map[string]any{"resourceVersion": rv, "annotations": map[string]any{annTTL: ms, annWrite: write}},
			"spec":     map[string]any{"renewTime": metav1.NewMicroTime(time.Now()), "leaseDurationSeconds": secs},
		}
	})
	if err != nil {
		return leasehold.Grant{}, s.opErr(ctx, "renew", g.Key, err)
	}
	return g, nil
}

// Release patches the Lease to released, keeping its token, on the same
// condition as Renew, and remembers the released Lease for the key's next
// acquire (see releasedLeases). The store never deletes a Lease.
func (s *Store) Release(ctx context.Context, g leasehold.Grant) error {
	if err := leasehold.CheckRelease(g); err != nil {
		return err
	}
	if err := s.checkOpen("release"); err != nil {
		return err
	}
	l, err := s.rewrite(ctx, g, func(rv, write string) map[string]any {
		return map[string]any{
			"metadata": map[string]any{"resourceVersion": rv, "annotations": map[string]any{
				annState: stateReleased, annWrite: write, annOwner: nil, annTTL: nil, annLabel: nil,
			}},
			"spec": map[string]any{"holderIdentity": nil},
		}
	})
	if st, _ := stateOf(g); err == nil {
		st.remember("") // a released grant's next call reads first
		s.rel.put(objectName(g.Key), l)
	}
	return s.opErr(ctx, "release", g.Key, err)
}

func (s *Store) opErr(ctx context.Context, op, key string, err error) error {
	if err == nil || errors.Is(err, leasehold.ErrNotHeld) {
		return err
	}
	return s.err(ctx, op, objectName(key), err)
}

// rewrite applies the merge patch patch(rv, write) to g's Lease if g still
// holds it: first on the resourceVersion the grant remembers, then, after
// a conflict (another writer, or this process's own write whose reply was
// lost), on that of a read that shows g's owner and token. A read that
// shows the last patch's write id means it landed. It returns the Lease
// as the patch left it.
func (s *Store) rewrite(ctx context.Context, g leasehold.Grant, patch func(rv, write string) map[string]any) (*coordinationv1.Lease, error) {
	name := objectName(g.Key)
	st, rv := stateOf(g)
	var write string // of the last patch tried
	for range maxTries {
		if rv == "" {
			cur, rec, err := s.read(ctx, name, g.Key)
			if err != nil {
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
		body, err := json.Marshal(patch(rv, write))
		if err != nil {
			return nil, err
		}
		l, err := s.leases.Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{})
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
