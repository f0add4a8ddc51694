package s3

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/objtoken"
)

// Name is the store's name in errors and Info.
const Name = "s3"

// MinTTL and MaxTTL bound the TTLs the store accepts. S3 says the time in
// whole seconds (HTTP dates), and the store adds a second to every lease
// for that rounding, so a TTL under a second would be mostly rounding.
const (
	MinTTL = time.Second
	MaxTTL = leasehold.MaxTTL
)

// ErrUnsafeServer is the cause of New's error when the server does not
// honour the conditional writes the store relies on (If-None-Match: * and
// If-Match on PUT), or does not say the time (no Date or Last-Modified
// header). Such a server could grant one key to two owners: the store
// refuses it rather than degrade.
var ErrUnsafeServer = errors.New("the server does not honour S3 conditional writes")

// Options configure a Store. The zero value keeps the store's objects at
// the bucket's root (keys/, tokens/ and, briefly, probe/).
type Options struct {
	// Prefix is put before every object name the store uses, as given
	// (say "leasehold/"); "" means none.
	Prefix string
}

// Store is a leasehold store on one S3 bucket.
type Store struct {
	c      *awss3.Client
	bucket string
	prefix string
	tr     *http.Transport                   // closed by Close when the store made the client
	rel    objtoken.Released[releasedObject] // the lease objects this store released: the next acquire writes at once
	closed atomic.Bool                       // after Close, every call fails with ErrClosed
}

// New returns a store on bucket, reached through c, after probing the
// server: it writes, rewrites and deletes one object under the prefix's
// probe/ to check that the bucket exists, that the credentials are
// accepted and that the server honours conditional writes and reports the
// time. A server that ignores a condition is refused with an error
// wrapping ErrUnsafeServer. Many S3-compatible servers need path-style
// addressing (awss3.Options.UsePathStyle). o may be nil.
func New(ctx context.Context, c *awss3.Client, bucket string, o *Options) (*Store, error) {
	if o == nil {
		o = &Options{}
	}
	s := &Store{c: c, bucket: bucket, prefix: o.Prefix}
	if err := s.probe(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Info describes the store.
func (s *Store) Info() leasehold.Info {
	return leasehold.Info{Name: Name, MinTTL: MinTTL, MaxTTL: MaxTTL, SafeTokens: true, PortableGrants: true,
		TokenCaveat: "tokens are max(previous + 1, the server's Date in µs); they repeat only if someone deletes both the lease and the counter object within the second of the key's last grant (two seconds, after someone deleted the lease object alone), or the server's clock steps back and both are deleted"}
}

// Close closes the idle connections of a store opened by OpenURL (its
// HTTP transport is the store's own). It does not release leases.
func (s *Store) Close() error {
	s.closed.Store(true)
	if s.tr != nil {
		s.tr.CloseIdleConnections()
	}
	return nil
}

// Client returns the store's S3 client.
func (s *Store) Client() *awss3.Client { return s.c }

// Bucket returns the store's bucket.
func (s *Store) Bucket() string { return s.bucket }

// LeaseObject returns the name of key's lease object.
func (s *Store) LeaseObject(key string) string { return s.prefix + "keys/" + objectName(key) }

// CounterObject returns the name of key's token counter object.
func (s *Store) CounterObject(key string) string { return s.prefix + "tokens/" + objectName(key) }

// checkOpen reports ErrClosed, as a *leasehold.StoreError, after Close.
func (s *Store) checkOpen(op string) error {
	if s.closed.Load() {
		return &leasehold.StoreError{Store: Name, Op: op, Err: leasehold.ErrClosed}
	}
	return nil
}

// where names an object in errors: bucket and object name.
func (s *Store) where(name string) string {
	return "bucket " + s.bucket + " object " + name
}

// err wraps err for op on object name in a *leasehold.StoreError, except
// the caller's own context error, returned as is.
func (s *Store) err(ctx context.Context, op, name string, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return ctx.Err()
	}
	return &leasehold.StoreError{Store: Name, Op: op, Err: fmt.Errorf("%s: %w", s.where(name), describe(err))}
}
