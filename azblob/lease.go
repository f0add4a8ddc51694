package azblob

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

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
	if p != nil {
		if _, err := parseBlob(leaseName(req.Key), p, false); err != nil {
			return leasehold.Grant{}, s.err("acquire", obj, err)
		}
	} else {
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
// The token is nextToken's: above both blobs' tokens and at least the
// server's Date in µs; at 2^64-1 nothing is written and the error wraps
// leasehold.ErrTokensExhausted (Acquire then releases the lease).
func (s *Store) stamp(ctx context.Context, req leasehold.AcquireRequest, id string) (uint64, error) {
	lb, cb := s.leaseBlob(req.Key), s.counterBlob(req.Key)
	lp, err := props(ctx, lb)
	if err != nil || lp == nil {
		return 0, errors.Join(err, errors.New("lease blob vanished after the lease acquire"))
	}
	ls, err := parseBlob(leaseName(req.Key), lp, false)
	if err != nil {
		return 0, err
	}
	cp, err := props(ctx, cb)
	if err != nil {
		return 0, err
	}
	var cs blobState
	if cp != nil {
		if cs, err = parseBlob(counterName(req.Key), cp, true); err != nil {
			return 0, err
		}
	}
	tok, ok := nextToken(ls.token, cs.token, maxTime(ls.date, cs.date))
	if !ok {
		return 0, fmt.Errorf("key %q: its token is at %d, the largest a token can be: %w", req.Key, uint64(math.MaxUint64), leasehold.ErrTokensExhausted)
	}
	t := strconv.FormatUint(tok, 10)
	if cp == nil {
		_, err = cb.Upload(ctx, nopCloser{}, &blockblob.UploadOptions{
			Metadata:         map[string]*string{metaMark: str("1"), metaToken: &t},
			AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: ptr(azcore.ETagAny)}},
		})
	} else {
		_, err = cb.SetMetadata(ctx, map[string]*string{metaMark: str("1"), metaToken: &t}, &blob.SetMetadataOptions{
			AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &cs.etag}},
		})
	}
	if err != nil {
		return 0, err
	}
	_, err = lb.SetMetadata(ctx, map[string]*string{metaMark: str("1"), metaToken: &t, metaLabel: &req.Label}, &blob.SetMetadataOptions{
		AccessConditions: &blob.AccessConditions{
			LeaseAccessConditions:    &blob.LeaseAccessConditions{LeaseID: &id},
			ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &ls.etag},
		},
	})
	return tok, err
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
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
	st, err := parseBlob(leaseName(g.Key), p, false)
	if err != nil {
		return nil, nil, err
	}
	if st.token != g.Token {
		return nil, nil, leasehold.ErrNotHeld
	}
	lc, _, err := s.leaser(g.Key, g.Owner)
	return lc, &st.etag, err
}

func notHeld(err error) bool {
	st := status(err)
	return st == 409 || st == 412
}
