package bench

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/leasehold-go/leasehold/azblob"
	"github.com/leasehold-go/leasehold/internal/benchcycle"
)

const ttl = azblob.MinTTL // Azure's shortest lease, 15 s

// impls returns the implementations, on one container client (one HTTP
// transport), closed when b ends.
func impls(b *testing.B) []benchcycle.Impl {
	st, err := azblob.OpenConnectionString(azurite.ConnectionString(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := st.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	lc := benchcycle.NewClient(b, st)
	return []benchcycle.Impl{
		{Name: "raw-sdk", New: raw(st.Container())},
		{Name: "leasehold", New: benchcycle.Store(st, ttl)},
		{Name: "lh-client", New: benchcycle.Client(lc, ttl)},
	}
}

// raw is the floor, and the loop a user would write with the SDK alone:
// acquire a lease on the key's blob (made once, beforehand), then release
// it. A lease already present is benchcycle.ErrHeld.
func raw(cc *container.Client) func(*testing.B, string, bool) (benchcycle.Cycle, func()) {
	return func(b *testing.B, key string, _ bool) (benchcycle.Cycle, func()) {
		_, lb, _ := peerBlob(b, cc, key)
		return func(ctx context.Context) error {
			if _, err := lb.AcquireLease(ctx, int32(ttl/time.Second), nil); err != nil {
				if isCode(err, "LeaseAlreadyPresent") {
					return benchcycle.ErrHeld
				}
				return err
			}
			_, err := lb.ReleaseLease(ctx, nil)
			return err
		}, nil
	}
}

// peerBlob makes the blob peers/key, for the loops written with the SDK
// alone, and returns it, a lease client on it and the client's (random)
// lease id.
func peerBlob(b *testing.B, cc *container.Client, key string) (*blockblob.Client, *lease.BlobClient, string) {
	bb := cc.NewBlockBlobClient("peers/" + key)
	if _, err := bb.UploadBuffer(context.Background(), nil, &blockblob.UploadBufferOptions{}); err != nil {
		b.Fatal(err)
	}
	id := newLeaseID()
	lb, err := lease.NewBlobClient(bb, &lease.BlobClientOptions{LeaseID: &id})
	if err != nil {
		b.Fatal(err)
	}
	return bb, lb, id
}

func isCode(err error, code string) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.ErrorCode == code
}

// newLeaseID returns a random lease id (a GUID).
func newLeaseID() string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}
