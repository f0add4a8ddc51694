package azblob

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/objtoken"
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
	// metaCeiling, on a lease blob, is a value the counter blob was
	// raised to (it is at or above it): tokens up to it are granted
	// without raising the counter again.
	metaCeiling = "ceiling"
)

// Store is a leasehold store on one Azure Blob container.
type Store struct {
	cc     *container.Client
	name   string
	tr     *http.Transport
	rel    objtoken.Released[blobState] // the lease blobs this store released: the next acquire takes the lease at once
	closed atomic.Bool                  // after Close, every call fails with ErrClosed
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
	return leasehold.Info{Name: Name, MinTTL: MinTTL, MaxTTL: MaxTTL, SafeTokens: true, PortableGrants: true,
		TokenCaveat: "tokens are max(previous + 1, the server's Date in µs); they repeat only if someone deletes both the lease and the counter blob within the second of the key's last grant (two seconds, after someone deleted the lease blob alone), or the server's clock steps back and both are deleted"}
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

// leaseName and counterName are the names of key's lease and counter
// blobs.
func leaseName(key string) string   { return "keys/" + key }
func counterName(key string) string { return "tokens/" + key }

func (s *Store) leaseBlob(key string) *blockblob.Client {
	return s.cc.NewBlockBlobClient(leaseName(key))
}

func (s *Store) counterBlob(key string) *blockblob.Client {
	return s.cc.NewBlockBlobClient(counterName(key))
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

// object names a key's blob in errors: container and blob name.
func (s *Store) object(key string) string {
	return "container " + s.name + " blob " + leaseName(key)
}

// Container returns the store's container client.
func (s *Store) Container() *container.Client { return s.cc }
