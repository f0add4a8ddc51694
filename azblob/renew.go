package azblob

import (
	"context"
	"errors"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/leasehold-go/leasehold"
)

// Renew renews the Azure lease (Azure renews a lapsed lease nobody took
// since, keeping the token), with If-Match on the ETag the grant's
// acquire left (held).
func (s *Store) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	if err := leasehold.CheckRenew(g, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	if err := s.checkOpen("renew"); err != nil {
		return leasehold.Grant{}, err
	}
	if _, err := durationOf(g.TTL); err != nil {
		return leasehold.Grant{}, s.err("renew", s.object(g.Key), err)
	}
	_, err := s.held(ctx, g, func(lc *lease.BlobClient, etag *azcore.ETag) (*azcore.ETag, error) {
		r, err := lc.RenewLease(ctx, &lease.BlobRenewOptions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: etag}})
		return r.ETag, err
	})
	if errors.Is(err, leasehold.ErrNotHeld) {
		return leasehold.Grant{}, leasehold.ErrNotHeld
	}
	if err != nil {
		return leasehold.Grant{}, s.err("renew", s.object(g.Key), err)
	}
	return g, nil
}

// Release releases the Azure lease, with If-Match as Renew, and remembers
// the blob as the release left it for the key's next acquire.
func (s *Store) Release(ctx context.Context, g leasehold.Grant) error {
	if err := leasehold.CheckRelease(g); err != nil {
		return err
	}
	if err := s.checkOpen("release"); err != nil {
		return err
	}
	st, err := s.held(ctx, g, func(lc *lease.BlobClient, etag *azcore.ETag) (*azcore.ETag, error) {
		r, err := lc.ReleaseLease(ctx, &lease.BlobReleaseOptions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: etag}})
		return r.ETag, err
	})
	if errors.Is(err, leasehold.ErrNotHeld) {
		return leasehold.ErrNotHeld
	}
	if err != nil {
		return s.err("release", s.object(g.Key), err)
	}
	s.rel.Put(leaseName(g.Key), st)
	return nil
}

// held runs op, a lease operation of g's lease id with If-Match on the
// given ETag, on the lease blob as g's acquire left it: first on the ETag
// the grant remembers, then, if that fails (a grant from elsewhere, or the
// blob changed), on the ETag of a read that shows g's token. The metadata
// is written only by an acquire, under its lease, so the ETag matches only
// while the blob still carries g's token. It returns what the blob holds
// after op (its token and ceiling, and the ETag op answered).
func (s *Store) held(ctx context.Context, g leasehold.Grant, op func(*lease.BlobClient, *azcore.ETag) (*azcore.ETag, error)) (blobState, error) {
	lc, _, err := s.leaser(g.Key, g.Owner)
	if err != nil {
		return blobState{}, err
	}
	gs, etag := stateOf(g)
	st := blobState{token: g.Token}
	if gs != nil {
		st.ceiling = gs.ceiling
	}
	if etag != nil {
		tag, err := op(lc, etag)
		if err == nil && tag != nil {
			st.etag = *tag
			return st, nil
		}
		if err == nil || !notHeld(err) && status(err) != 404 {
			return st, err
		}
	}
	p, err := props(ctx, s.leaseBlob(g.Key))
	if err != nil {
		return blobState{}, err
	}
	if p == nil {
		return blobState{}, leasehold.ErrNotHeld
	}
	if st, err = parseBlob(leaseName(g.Key), p, false); err != nil {
		return blobState{}, err
	}
	if st.token != g.Token {
		return blobState{}, leasehold.ErrNotHeld
	}
	tag, err := op(lc, &st.etag)
	if notHeld(err) {
		return blobState{}, leasehold.ErrNotHeld
	}
	if tag != nil {
		st.etag = *tag
	}
	return st, err
}

// Holder reads the lease state and the metadata. Azure does not say how
// long a lease has left, so Remaining is 0 (unknown).
func (s *Store) Holder(ctx context.Context, key string) (leasehold.Holder, error) {
	if err := leasehold.CheckHolder(key); err != nil {
		return leasehold.Holder{}, err
	}
	if err := s.checkOpen("holder"); err != nil {
		return leasehold.Holder{}, err
	}
	lb := s.leaseBlob(key)
	p, err := props(ctx, lb)
	if err != nil {
		return leasehold.Holder{}, s.err("holder", s.object(key), err)
	}
	if p == nil {
		return leasehold.Holder{}, leasehold.ErrNotHeld
	}
	st, err := parseBlob(leaseName(key), p, false)
	if err != nil {
		return leasehold.Holder{}, s.err("holder", s.object(key), err)
	}
	if !st.leased {
		return leasehold.Holder{}, leasehold.ErrNotHeld
	}
	return leasehold.Holder{Key: key, Label: st.label, Token: st.token}, nil
}

func notHeld(err error) bool {
	st := status(err)
	return st == 409 || st == 412
}
