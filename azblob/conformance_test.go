package azblob_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/azblob"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/leasetest"
)

// open returns a store on container name of a, migrated.
func open(t testing.TB, a *testserver.Azurite, name string) *azblob.Store {
	t.Helper()
	s, err := azblob.OpenConnectionString(a.ConnectionString(), name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestAzurite runs the conformance suite and the store's own tests on one
// Azurite. Azurite missing fails the test: NewAzurite does not skip.
func TestAzurite(t *testing.T) {
	a := testserver.NewAzurite(t, testserver.AzuriteOptions{})
	t.Run("conformance", func(t *testing.T) {
		leasetest.Run(t, leasetest.Config{
			Open:       func(t testing.TB) leasehold.Store { return open(t, a, "conformance") },
			Contenders: 16,
		})
	})
	t.Run("deleted_blobs_do_not_restart_the_token", func(t *testing.T) { testDeleted(t, a) })
	t.Run("bad_input", func(t *testing.T) { testBadInput(t, a) })
	t.Run("tokens_exhausted", func(t *testing.T) { testTokensExhausted(t, a) })
	t.Run("planted_metadata_refused", func(t *testing.T) { testPlanted(t, a) })
	t.Run("both_blobs_deleted", func(t *testing.T) { testBothDeleted(t, a) })
	t.Run("calls", func(t *testing.T) { testCalls(t, a) })
}

func acquire(t testing.TB, s leasehold.Store, key, owner string) leasehold.Grant {
	t.Helper()
	g, err := s.Acquire(ctxT(t), leasehold.AcquireRequest{Key: key, Owner: owner, Label: "test", TTL: 15 * time.Second})
	if err != nil {
		t.Fatalf("acquire %s: %v", key, err)
	}
	return g
}

// testDeleted deletes the lease blob (breaking its lease first, as another
// party would) and then the counter blob: neither deletion lets a later
// token repeat or go back.
func testDeleted(t *testing.T, a *testserver.Azurite) {
	s := open(t, a, "deleted")
	cc := s.Container()
	g1 := acquire(t, s, "k", "owner-1-aaaaaaaaaaaaaaaa")
	if err := s.Release(ctxT(t), g1); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.NewBlobClient("keys/k").Delete(ctxT(t), nil); err != nil {
		t.Fatal(err)
	}
	g2 := acquire(t, s, "k", "owner-2-aaaaaaaaaaaaaaaa")
	if g2.Token <= g1.Token {
		t.Fatalf("after the lease blob was deleted: token %d, earlier %d", g2.Token, g1.Token)
	}
	if err := s.Release(ctxT(t), g2); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.NewBlobClient("tokens/k").Delete(ctxT(t), nil); err != nil {
		t.Fatal(err)
	}
	g3 := acquire(t, s, "k", "owner-3-aaaaaaaaaaaaaaaa")
	if g3.Token <= g2.Token {
		t.Fatalf("after the counter blob was deleted: token %d, earlier %d", g3.Token, g2.Token)
	}
}

func testBadInput(t *testing.T, a *testserver.Azurite) {
	req := leasehold.AcquireRequest{Key: "k", Owner: "owner-bad-aaaaaaaaaaaaaaa", TTL: 15 * time.Second}
	missing, err := azblob.OpenConnectionString(a.ConnectionString(), "nosuchcontainer")
	if err != nil {
		t.Fatal(err)
	}
	_, err = missing.Acquire(ctxT(t), req)
	wantErr(t, "missing container", err, "azblob", "container nosuchcontainer", "ContainerNotFound")

	bad, err := azblob.OpenSharedKey(a.BlobEndpoint(), testserver.AzuriteAccount, "AAAA"+testserver.AzuriteKey[4:], "conformance")
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.Acquire(ctxT(t), req)
	wantErr(t, "refused credentials", err, "azblob", "container conformance blob keys/k", "403")

	s := open(t, a, "badinput")
	for _, ttl := range []time.Duration{time.Second, 14 * time.Second, 61 * time.Second} {
		r := req
		r.TTL = ttl
		_, err = s.Acquire(ctxT(t), r)
		if err == nil {
			t.Fatalf("TTL %v accepted", ttl)
		}
	}

	foreign := s.Container().NewBlockBlobClient("keys/foreign")
	if _, err := foreign.UploadBuffer(ctxT(t), []byte("not ours"), nil); err != nil {
		t.Fatal(err)
	}
	r := req
	r.Key = "foreign"
	_, err = s.Acquire(ctxT(t), r)
	wantErr(t, "someone else's blob", err, "azblob", "container badinput blob keys/foreign", "not a leasehold record")
	wantAvailable(t, foreign, "someone else's blob after a refused acquire")

	// A foreign counter blob makes the metadata write after the lease
	// acquire fail: the lease taken must be released, not leaked.
	if _, err := s.Container().NewBlockBlobClient("tokens/badcounter").UploadBuffer(ctxT(t), []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	r.Key = "badcounter"
	_, err = s.Acquire(ctxT(t), r)
	wantErr(t, "someone else's counter blob", err, "azblob", "tokens/badcounter", "not a leasehold record")
	wantAvailable(t, s.Container().NewBlockBlobClient("keys/badcounter"), "the lease blob after a failed token write")
}

func wantAvailable(t *testing.T, b *blockblob.Client, what string) {
	t.Helper()
	p, err := b.GetProperties(ctxT(t), nil)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if p.LeaseState == nil || string(*p.LeaseState) != "available" {
		t.Fatalf("%s: lease state %v; want available", what, deref(p.LeaseState))
	}
}

func wantErr(t *testing.T, what string, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	if !errors.Is(err, leasehold.ErrStore) {
		t.Errorf("%s: %v is not a store error", what, err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %q does not name %q", what, err, p)
		}
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
