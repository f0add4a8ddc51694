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
	"github.com/leasehold-go/leasehold/internal/objtoken"
)

// maxTries bounds the read-and-acquire rounds of one acquire that lose to
// other writers of the lease blob's metadata.
const maxTries = 32

func asResponse(err error, re **azcore.ResponseError) bool { return errors.As(err, re) }

func str(v string) *string { return &v }

// Acquire takes the Azure lease of the key's blob with If-Match on the
// ETag of a read of it (made first if the blob is missing), so that its
// metadata is the one read; then it writes the new token into the
// metadata under the lease (stamp). A key this store released last is
// taken at once, on the ETag its release left, without the read.
func (s *Store) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	if err := leasehold.CheckAcquire(req, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	if err := s.checkOpen("acquire"); err != nil {
		return leasehold.Grant{}, err
	}
	obj := s.object(req.Key)
	secs, err := durationOf(req.TTL)
	if err != nil {
		return leasehold.Grant{}, s.err("acquire", obj, err)
	}
	lc, id, err := s.leaser(req.Key, req.Owner)
	if err != nil {
		return leasehold.Grant{}, s.err("acquire", obj, err)
	}
	if st, ok := s.rel.Take(leaseName(req.Key)); ok {
		if g, done, err := s.acquireOn(ctx, req, lc, id, secs, st); done || err != nil {
			return g, err
		}
	}
	for range maxTries {
		st, err := s.readOrCreate(ctx, req.Key)
		if err != nil {
			return leasehold.Grant{}, s.err("acquire", obj, err)
		}
		if st == nil {
			continue // created by another acquirer meanwhile: read it
		}
		if g, done, err := s.acquireOn(ctx, req, lc, id, secs, *st); done || err != nil {
			return g, err
		}
	}
	// Every round lost to another writer: the key is busy.
	return leasehold.Grant{}, &leasehold.HeldError{Key: req.Key}
}

// readOrCreate reads the key's lease blob, creating it when missing; nil
// when another acquirer created it first.
func (s *Store) readOrCreate(ctx context.Context, key string) (*blobState, error) {
	lb := s.leaseBlob(key)
	p, err := props(ctx, lb)
	if err != nil {
		return nil, err
	}
	if p != nil {
		st, err := parseBlob(leaseName(key), p, false)
		return &st, err
	}
	r, err := lb.Upload(ctx, nopCloser{}, &blockblob.UploadOptions{
		Metadata:         map[string]*string{metaMark: str("1")},
		AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: ptr(azcore.ETagAny)}},
	})
	switch {
	case hasCode(err, "BlobAlreadyExists") || status(err) == 412 || status(err) == 409:
		return nil, nil
	case err != nil:
		return nil, err
	case r.ETag == nil || *r.ETag == "":
		return nil, foreign(leaseName(key), "the server sent no ETag for it")
	}
	return &blobState{etag: *r.ETag}, nil
}

// acquireOn takes the lease with If-Match on st's ETag, then stamps the
// token. done is false when the blob changed since st (the caller reads
// it again).
func (s *Store) acquireOn(ctx context.Context, req leasehold.AcquireRequest, lc *lease.BlobClient, id string, secs int32, st blobState) (g leasehold.Grant, done bool, err error) {
	obj := s.object(req.Key)
	r, err := lc.AcquireLease(ctx, secs, &lease.BlobAcquireOptions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &st.etag}})
	switch {
	case hasCode(err, "LeaseAlreadyPresent"):
		h, _ := s.Holder(ctx, req.Key)
		return g, true, &leasehold.HeldError{Key: req.Key, Label: h.Label, Token: h.Token}
	case status(err) == 412 || status(err) == 404:
		return g, false, nil
	case err != nil:
		return g, true, s.err("acquire", obj, err)
	}
	now, err := parseDate(leaseName(req.Key), r.Date)
	var tok, ceiling uint64
	var etag azcore.ETag
	if err == nil {
		st.date = maxTime(st.date, now) // the token's floor when the counter is raised
		tok, ceiling, etag, err = s.stamp(ctx, req, id, st)
	}
	if err != nil {
		// Never leak the lease: release it on a fresh context.
		_, _ = lc.ReleaseLease(context.WithoutCancel(ctx), nil)
		return g, true, s.err("acquire", obj, err)
	}
	g = leasehold.Grant{Key: req.Key, Owner: req.Owner, Label: req.Label, Token: tok, TTL: durationSecs(secs)}
	g.Private = newState(g, ceiling, etag)
	return g, true, nil
}

// stamp writes the new token into the lease blob's metadata under lease
// id, with If-Match on st's ETag (the blob as the lease was taken on it).
// The token is the one after st's, and at least the server's Date in µs,
// under st's ceiling; past it (or without one) the counter blob is raised
// first (reserve). At 2^64-1 nothing is
// written and the error wraps leasehold.ErrTokensExhausted (Acquire then
// releases the lease). It returns the token, the ceiling and the new
// ETag.
func (s *Store) stamp(ctx context.Context, req leasehold.AcquireRequest, id string, st blobState) (tok, ceiling uint64, etag azcore.ETag, err error) {
	tok, ok := objtoken.Next(st.token, st.ceiling, st.date)
	ceiling = st.ceiling
	if !ok {
		if tok, ceiling, err = s.reserve(ctx, req.Key, st); err != nil {
			return 0, 0, "", err
		}
	}
	t, c := strconv.FormatUint(tok, 10), strconv.FormatUint(ceiling, 10)
	r, err := s.leaseBlob(req.Key).SetMetadata(ctx, map[string]*string{metaMark: str("1"), metaToken: &t, metaLabel: &req.Label, metaCeiling: &c}, &blob.SetMetadataOptions{
		AccessConditions: &blob.AccessConditions{
			LeaseAccessConditions:    &blob.LeaseAccessConditions{LeaseID: &id},
			ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &st.etag},
		},
	})
	if err != nil {
		return 0, 0, "", err
	}
	if r.ETag == nil || *r.ETag == "" {
		return 0, 0, "", foreign(leaseName(req.Key), "the server sent no ETag for it")
	}
	return tok, ceiling, *r.ETag, nil
}

// reserve raises the key's counter blob, read now, and returns a new
// token and the ceiling the counter now holds: the token is nextToken's,
// above both blobs' tokens and at least the server's Date in µs; the
// ceiling is objtoken.Step past it. The counter is written with If-Match on
// the etag read (If-None-Match: * when it does not exist yet).
func (s *Store) reserve(ctx context.Context, key string, ls blobState) (tok, ceiling uint64, err error) {
	cb := s.counterBlob(key)
	cp, err := props(ctx, cb)
	if err != nil {
		return 0, 0, err
	}
	var cs blobState
	if cp != nil {
		if cs, err = parseBlob(counterName(key), cp, true); err != nil {
			return 0, 0, err
		}
	}
	tok, ok := nextToken(ls.token, cs.token, maxTime(ls.date, cs.date))
	if !ok {
		return 0, 0, fmt.Errorf("key %q: its token is at %d, the largest a token can be: %w", key, uint64(math.MaxUint64), leasehold.ErrTokensExhausted)
	}
	ceiling = objtoken.Ceiling(tok)
	c := strconv.FormatUint(ceiling, 10)
	meta := map[string]*string{metaMark: str("1"), metaToken: &c}
	if cp == nil {
		_, err = cb.Upload(ctx, nopCloser{}, &blockblob.UploadOptions{
			Metadata:         meta,
			AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: ptr(azcore.ETagAny)}},
		})
	} else {
		_, err = cb.SetMetadata(ctx, meta, &blob.SetMetadataOptions{
			AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &cs.etag}},
		})
	}
	return tok, ceiling, err
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
