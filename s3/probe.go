package s3

import (
	"context"
	"errors"
	"fmt"
	"time"

	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/leasehold-go/leasehold"
)

// probe checks, on a throwaway object under the prefix's probe/, what the
// store relies on: the bucket exists and the credentials may write it; a
// create (If-None-Match: *) of an existing object is refused; a write with
// If-Match on a wrong ETag is refused and one on the right ETag applied;
// every write gets a new ETag; reads say the server's time (Date) and the
// write's (Last-Modified). The object is deleted afterwards (the store
// never deletes otherwise, so a server that ignores conditions on DELETE,
// as MinIO does, is not a hazard).
func (s *Store) probe(ctx context.Context) error {
	name := s.prefix + "probe/" + nonce()
	key := "probe"
	fail := func(err error) error { return s.err(ctx, "open", name, err) }
	unsafe := func(what string) error {
		return &leasehold.StoreError{Store: Name, Op: "open", Err: fmt.Errorf("%s (%s): %w: %s", s.where(name), s.endpoint(), ErrUnsafeServer, what)}
	}
	rec := counterRecord(key, 1)
	etag, err := s.write(ctx, name, &rec, create)
	if err != nil {
		return fail(err)
	}
	defer s.remove(ctx, name)
	switch _, err := s.write(ctx, name, &rec, create); {
	case err == nil:
		return unsafe("a PUT with If-None-Match: * replaced an existing object")
	case !conflict(err):
		return fail(err)
	}
	switch _, err := s.write(ctx, name, &rec, cond(`"0123456789abcdef0123456789abcdef"`)); {
	case err == nil:
		return unsafe("a PUT with If-Match on a wrong ETag was applied")
	case !conflict(err):
		return fail(err)
	}
	rec.Token = 2
	next, err := s.write(ctx, name, &rec, cond(etag))
	switch {
	case conflict(err):
		return unsafe("a PUT with If-Match on the object's own ETag was refused")
	case err != nil:
		return fail(err)
	case next == etag:
		return unsafe("a rewrite kept the object's ETag")
	}
	o, _, err := s.read(ctx, name, key, kindCounter)
	switch {
	case errors.Is(err, errNoDate), errors.Is(err, errNoVersion):
		return unsafe(err.Error())
	case err != nil:
		return fail(err)
	case o == nil || o.rec.Token != 2 || o.etag != next:
		return unsafe("a read after a write did not return that write")
	}
	return nil
}

// remove deletes the probe object, even when ctx has ended.
func (s *Store) remove(ctx context.Context, name string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_, _ = s.c.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: &s.bucket, Key: &name})
}

// endpoint names the server in errors.
func (s *Store) endpoint() string {
	if ep := s.c.Options().BaseEndpoint; ep != nil {
		return "endpoint " + *ep
	}
	return "region " + s.c.Options().Region
}
