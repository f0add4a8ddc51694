// Package azblob is a leasehold store on Azure Blob Storage leases.
//
// Each key is one block blob, keys/<key>, in a container the user names
// (made by [Store.Migrate], never at acquire time). A lease is an Azure
// blob lease: Azure's clock ends it. The lease id is derived from the
// owner id, so a grant is portable (any process holding key and owner can
// renew or release it).
//
// TTLs: Azure leases last 15 to 60 s. A TTL below 15 s or above 60 s is
// refused with an error naming the range; a TTL is rounded up to whole
// seconds and the rounded value is the grant's TTL.
//
// The fencing token is a counter kept in the metadata of a second blob,
// tokens/<key>, that is never leased or deleted by the store. After the
// lease acquire, the counter blob is rewritten with If-Match on the etag
// read (or If-None-Match: * when it does not exist yet), and then the
// lease blob's metadata is written with the lease id and If-Match on its
// etag. A new token is one more than the larger of the counter and the
// lease blob's own token, so a lease blob deleted by someone else cannot
// restart the counter, and a counter blob deleted by someone else cannot
// either while the lease blob keeps its last token. An acquire whose
// metadata writes fail releases the lease it took.
package azblob

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/leasehold-go/leasehold"
)

// Name is the store's name in errors and Info.
const Name = "azblob"

// MinTTL and MaxTTL are Azure's lease duration bounds.
const (
	MinTTL = 15 * time.Second
	MaxTTL = 60 * time.Second
)

// Metadata names on the blobs (Azure compares them without case).
const (
	metaMark  = "leasehold" // "1" on every blob the store writes
	metaToken = "token"
	metaLabel = "label"
)

// Store is a leasehold store on one Azure Blob container.
type Store struct {
	cc     *container.Client
	name   string
	tr     *http.Transport
	closed atomic.Bool // after Close, every call fails with ErrClosed
}

// New returns a store on the container cc. Call Migrate once to create
// the container.
func New(cc *container.Client) *Store {
	return &Store{cc: cc, name: containerName(cc.URL())}
}

func containerName(u string) string {
	if p, err := url.Parse(u); err == nil {
		u = p.Path
	}
	return u[strings.LastIndex(u, "/")+1:]
}

// Migrate creates the store's container if it does not exist.
func (s *Store) Migrate(ctx context.Context) error {
	_, err := s.cc.Create(ctx, nil)
	if err != nil && !hasCode(err, "ContainerAlreadyExists") {
		return s.err("migrate", "container "+s.name, err)
	}
	return nil
}

// Info describes the store.
func (s *Store) Info() leasehold.Info {
	return leasehold.Info{Name: Name, MinTTL: MinTTL, MaxTTL: MaxTTL, SafeTokens: true, PortableGrants: true}
}

// Close closes the idle connections of a store opened by this package's
// Open functions (their HTTP transport is the store's own).
func (s *Store) Close() error {
	s.closed.Store(true)
	if s.tr != nil {
		s.tr.CloseIdleConnections()
	}
	return nil
}

// checkOpen reports ErrClosed, as a *leasehold.StoreError, after Close.
func (s *Store) checkOpen(op string) error {
	if s.closed.Load() {
		return &leasehold.StoreError{Store: Name, Op: op, Err: leasehold.ErrClosed}
	}
	return nil
}

func (s *Store) leaseBlob(key string) *blockblob.Client {
	return s.cc.NewBlockBlobClient("keys/" + key)
}

func (s *Store) counterBlob(key string) *blockblob.Client {
	return s.cc.NewBlockBlobClient("tokens/" + key)
}

// leaseID derives an Azure lease id (a GUID) from an owner id.
func leaseID(owner string) string {
	h := sha256.Sum256([]byte("leasehold-azblob:" + owner))
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

func (s *Store) leaser(key, owner string) (*lease.BlobClient, string, error) {
	id := leaseID(owner)
	lc, err := lease.NewBlobClient(s.leaseBlob(key), &lease.BlobClientOptions{LeaseID: &id})
	return lc, id, err
}

// durationOf turns a TTL into whole seconds within Azure's bounds.
func durationOf(ttl time.Duration) (int32, error) {
	secs := (ttl + time.Second - 1) / time.Second
	if ttl < MinTTL || secs > MaxTTL/time.Second {
		return 0, fmt.Errorf("TTL %v is outside Azure's lease range %v to %v", ttl, MinTTL, MaxTTL)
	}
	return int32(secs), nil
}

func (s *Store) err(op, object string, err error) error {
	if err == context.Canceled || err == context.DeadlineExceeded {
		return err
	}
	return &leasehold.StoreError{Store: Name, Op: op, Err: fmt.Errorf("%s: %w", object, err)}
}

func hasCode(err error, code string) bool {
	var re *azcore.ResponseError
	return asResponse(err, &re) && re.ErrorCode == code
}

func status(err error) int {
	var re *azcore.ResponseError
	if asResponse(err, &re) {
		return re.StatusCode
	}
	return 0
}

func meta(m map[string]*string, name string) (string, bool) {
	for k, v := range m {
		if strings.EqualFold(k, name) && v != nil {
			return *v, true
		}
	}
	return "", false
}

func tokenOf(m map[string]*string) (uint64, error) {
	v, ok := meta(m, metaToken)
	if !ok {
		return 0, nil
	}
	return strconv.ParseUint(v, 10, 64)
}

// props reads a blob's properties; a missing blob is (nil, nil).
func props(ctx context.Context, b *blockblob.Client) (*blob.GetPropertiesResponse, error) {
	p, err := b.GetProperties(ctx, nil)
	if hasCode(err, "BlobNotFound") {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// checkOurs refuses a blob that the store did not write.
func checkOurs(p *blob.GetPropertiesResponse) error {
	if p == nil {
		return nil
	}
	if v, _ := meta(p.Metadata, metaMark); v != "1" {
		return fmt.Errorf("not a leasehold lease (someone else's blob at that name; no %q metadata)", metaMark)
	}
	if _, err := tokenOf(p.Metadata); err != nil {
		return fmt.Errorf("not a leasehold lease: bad token metadata: %w", err)
	}
	return nil
}

// object names a key's blob in errors: container and blob name.
func (s *Store) object(key string) string {
	return "container " + s.name + " blob keys/" + key
}

// Container returns the store's container client.
func (s *Store) Container() *container.Client { return s.cc }
