package azblob

import (
	"context"
	"errors"
	"strconv"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/leasehold-go/leasehold"
)

func asResponse(err error, re **azcore.ResponseError) bool { return errors.As(err, re) }

func str(v string) *string { return &v }

// Acquire creates the key's blob if missing, takes its lease, then bumps
// the token counter and writes the lease blob's metadata under the lease.
func (s *Store) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	if err := leasehold.CheckAcquire(req, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	if err := s.checkOpen("acquire"); err != nil {
		return leasehold.Grant{}, err
	}
	secs, err := durationOf(req.TTL)
	if err != nil {
		return leasehold.Grant{}, s.err("acquire", s.object(req.Key), err)
	}
	lb := s.leaseBlob(req.Key)
	obj := s.object(req.Key)
	p, err := props(ctx, lb)
	if err != nil {
		return leasehold.Grant{}, s.err("acquire", obj, err)
	}
	if err := checkOurs(p); err != nil {
		return leasehold.Grant{}, s.err("acquire", obj, err)
	}
	if p == nil {
		_, err := lb.Upload(ctx, nopCloser{}, &blockblob.UploadOptions{
			Metadata:         map[string]*string{metaMark: str("1")},
			AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: ptr(azcore.ETagAny)}},
		})
		if err != nil && !hasCode(err, "BlobAlreadyExists") && status(err) != 412 && status(err) != 409 {
			return leasehold.Grant{}, s.err("acquire", obj, err)
		}
	}
	lc, id, err := s.leaser(req.Key, req.Owner)
	if err != nil {
		return leasehold.Grant{}, s.err("acquire", obj, err)
	}
	if _, err := lc.AcquireLease(ctx, secs, nil); err != nil {
		if hasCode(err, "LeaseAlreadyPresent") {
			h, _ := s.Holder(ctx, req.Key)
			return leasehold.Grant{}, &leasehold.HeldError{Key: req.Key, Label: h.Label, Token: h.Token}
		}
		return leasehold.Grant{}, s.err("acquire", obj, err)
	}
	tok, err := s.stamp(ctx, req, id)
	if err != nil {
		// Never leak the lease: release it on a fresh context.
		_, _ = lc.ReleaseLease(context.WithoutCancel(ctx), nil)
		return leasehold.Grant{}, s.err("acquire", obj, err)
	}
	return leasehold.Grant{Key: req.Key, Owner: req.Owner, Label: req.Label, Token: tok, TTL: durationSecs(secs)}, nil
}

// stamp bumps the counter blob and writes the lease blob's metadata under
// lease id, both with If-Match on the etags read after the lease acquire.
func (s *Store) stamp(ctx context.Context, req leasehold.AcquireRequest, id string) (uint64, error) {
	lb, cb := s.leaseBlob(req.Key), s.counterBlob(req.Key)
	lp, err := props(ctx, lb)
	if err != nil || lp == nil {
		return 0, errors.Join(err, errors.New("lease blob vanished after the lease acquire"))
	}
	if err := checkOurs(lp); err != nil {
		return 0, err
	}
	cp, err := props(ctx, cb)
	if err != nil {
		return 0, err
	}
	if err := checkOurs(cp); err != nil {
		return 0, errors.Join(errors.New("counter blob tokens/"+req.Key), err)
	}
	last, _ := tokenOf(lp.Metadata)
	if cp != nil {
		c, _ := tokenOf(cp.Metadata)
		last = max(last, c)
	}
	tok := last + 1
	t := strconv.FormatUint(tok, 10)
	if cp == nil {
		_, err = cb.Upload(ctx, nopCloser{}, &blockblob.UploadOptions{
			Metadata:         map[string]*string{metaMark: str("1"), metaToken: &t},
			AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: ptr(azcore.ETagAny)}},
		})
	} else {
		_, err = cb.SetMetadata(ctx, map[string]*string{metaMark: str("1"), metaToken: &t}, &blob.SetMetadataOptions{
			AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: cp.ETag}},
		})
	}
	if err != nil {
		return 0, err
	}
	_, err = lb.SetMetadata(ctx, map[string]*string{metaMark: str("1"), metaToken: &t, metaLabel: &req.Label}, &blob.SetMetadataOptions{
		AccessConditions: &blob.AccessConditions{
			LeaseAccessConditions:    &blob.LeaseAccessConditions{LeaseID: &id},
			ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: lp.ETag},
		},
	})
	return tok, err
}

// Renew renews the Azure lease (Azure renews a lapsed lease nobody took
// since, keeping the token).
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
	lc, etag, err := s.held(ctx, g)
	if err == nil {
		_, err = lc.RenewLease(ctx, &lease.BlobRenewOptions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: etag}})
	}
	if errors.Is(err, leasehold.ErrNotHeld) || notHeld(err) {
		return leasehold.Grant{}, leasehold.ErrNotHeld
	}
	if err != nil {
		return leasehold.Grant{}, s.err("renew", s.object(g.Key), err)
	}
	return g, nil
}

// Release releases the Azure lease.
func (s *Store) Release(ctx context.Context, g leasehold.Grant) error {
	if err := leasehold.CheckRelease(g); err != nil {
		return err
	}
	if err := s.checkOpen("release"); err != nil {
		return err
	}
	lc, etag, err := s.held(ctx, g)
	if err == nil {
		_, err = lc.ReleaseLease(ctx, &lease.BlobReleaseOptions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: etag}})
	}
	if errors.Is(err, leasehold.ErrNotHeld) || notHeld(err) {
		return leasehold.ErrNotHeld
	}
	if err != nil {
		return s.err("release", s.object(g.Key), err)
	}
	return nil
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
	if p == nil || p.LeaseState == nil || *p.LeaseState != lease.StateTypeLeased {
		return leasehold.Holder{}, leasehold.ErrNotHeld
	}
	if err := checkOurs(p); err != nil {
		return leasehold.Holder{}, s.err("holder", s.object(key), err)
	}
	tok, _ := tokenOf(p.Metadata)
	label, _ := meta(p.Metadata, metaLabel)
	return leasehold.Holder{Key: key, Label: label, Token: tok}, nil
}

// held checks that g's token is the one in the lease blob's metadata and
// returns g's lease client and the etag read; the lease operation that
// follows is conditional on that etag, so a later acquire (which rewrites
// the metadata) makes it fail.
func (s *Store) held(ctx context.Context, g leasehold.Grant) (*lease.BlobClient, *azcore.ETag, error) {
	p, err := props(ctx, s.leaseBlob(g.Key))
	if err != nil {
		return nil, nil, err
	}
	if p == nil {
		return nil, nil, leasehold.ErrNotHeld
	}
	if err := checkOurs(p); err != nil {
		return nil, nil, err
	}
	if tok, _ := tokenOf(p.Metadata); tok != g.Token {
		return nil, nil, leasehold.ErrNotHeld
	}
	lc, _, err := s.leaser(g.Key, g.Owner)
	return lc, p.ETag, err
}

func notHeld(err error) bool {
	st := status(err)
	return st == 409 || st == 412
}
