package azblob_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/azblob"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

// plant writes blob name with metadata md (a nil value is left out), as
// someone with write access to the container could.
func plant(t *testing.T, s *azblob.Store, name string, md map[string]string) {
	t.Helper()
	m := map[string]*string{}
	for k, v := range md {
		m[k] = &v
	}
	if _, err := s.Container().NewBlockBlobClient(name).UploadBuffer(ctxT(t), nil, &blockblob.UploadBufferOptions{Metadata: m}); err != nil {
		t.Fatalf("plant %s: %v", name, err)
	}
}

func remove(t *testing.T, s *azblob.Store, name string) {
	t.Helper()
	if _, err := s.Container().NewBlobClient(name).Delete(ctxT(t), nil); err != nil {
		t.Fatalf("delete %s: %v", name, err)
	}
}

func req(key string) leasehold.AcquireRequest {
	return leasehold.AcquireRequest{Key: key, Owner: leasehold.NewOwnerID(), Label: "test", TTL: 15 * time.Second}
}

// wantExhausted checks that an acquire of key was refused because its
// tokens are exhausted, and that it left nothing held: the lease blob's
// lease is free and Holder says so.
func wantExhausted(t *testing.T, s *azblob.Store, what, key string, err error) {
	t.Helper()
	if !errors.Is(err, leasehold.ErrTokensExhausted) || errors.Is(err, leasehold.ErrHeld) {
		t.Fatalf("%s: %v; want ErrTokensExhausted", what, err)
	}
	wantErr(t, what, err, "azblob", "acquire", fmt.Sprintf("%q", key))
	wantAvailable(t, s.Container().NewBlockBlobClient("keys/"+key), what+": the lease blob")
	if _, err := s.Holder(ctxT(t), key); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("%s: Holder: %v, want ErrNotHeld", what, err)
	}
}

// testTokensExhausted plants counters and lease blobs whose token is at or
// near 2^64-1: the store refuses the grant rather than wrap to token 0,
// and holds nothing afterwards (another owner is refused the same way,
// not blocked by a leaked lease).
func testTokensExhausted(t *testing.T, a *testserver.Azurite) {
	s := open(t, a, "planted")
	top := fmt.Sprint(uint64(math.MaxUint64))
	plant(t, s, "tokens/max", map[string]string{"leasehold": "1", "token": top})
	_, err := s.Acquire(ctxT(t), req("max"))
	wantExhausted(t, s, "counter at 2^64-1", "max", err)
	_, err = s.Acquire(ctxT(t), req("max"))
	wantExhausted(t, s, "another owner after the refusal", "max", err)

	plant(t, s, "tokens/near", map[string]string{"leasehold": "1", "token": fmt.Sprint(uint64(math.MaxUint64 - 1))})
	g := acquire(t, s, "near", leasehold.NewOwnerID())
	if g.Token != math.MaxUint64 {
		t.Fatalf("counter at 2^64-2: token %d, want 2^64-1", g.Token)
	}
	if err := s.Release(ctxT(t), g); err != nil {
		t.Fatal(err)
	}
	_, err = s.Acquire(ctxT(t), req("near"))
	wantExhausted(t, s, "after the token 2^64-1", "near", err)

	plant(t, s, "keys/lease", map[string]string{"leasehold": "1", "token": top, "label": "x"})
	_, err = s.Acquire(ctxT(t), req("lease"))
	wantExhausted(t, s, "lease blob at 2^64-1", "lease", err)

	remove(t, s, "tokens/max") // repaired: granted again, with a new token
	if g := acquire(t, s, "max", leasehold.NewOwnerID()); g.Token == 0 || g.Token == math.MaxUint64 {
		t.Fatalf("after the repair: token %d", g.Token)
	}
}

// testPlanted plants blobs whose metadata the store did not write: each
// is refused as foreign, naming the blob, and no lease is left taken.
func testPlanted(t *testing.T, a *testserver.Azurite) {
	s := open(t, a, "planted")
	for _, c := range []struct {
		what, blob string
		md         map[string]string
		reason     string
	}{
		{"negative token", "keys/k", map[string]string{"leasehold": "1", "token": "-1"}, "token"},
		{"token past 2^64-1", "keys/k", map[string]string{"leasehold": "1", "token": "18446744073709551616"}, "token"},
		{"token not a number", "keys/k", map[string]string{"leasehold": "1", "token": "x"}, "token"},
		{"token 0", "keys/k", map[string]string{"leasehold": "1", "token": "0"}, "token 0"},
		{"token with leading zeros", "keys/k", map[string]string{"leasehold": "1", "token": "007"}, "token"},
		{"label without token", "keys/k", map[string]string{"leasehold": "1", "label": "x"}, "label"},
		{"no mark", "keys/k", map[string]string{"token": "5"}, "leasehold"},
		{"counter without token", "tokens/k", map[string]string{"leasehold": "1"}, "token"},
		{"counter token negative", "tokens/k", map[string]string{"leasehold": "1", "token": "-5"}, "token"},
		{"counter with a label", "tokens/k", map[string]string{"leasehold": "1", "token": "5", "label": "x"}, "label"},
	} {
		plant(t, s, c.blob, c.md)
		_, err := s.Acquire(ctxT(t), req("k"))
		wantForeign(t, c.what+": acquire", err, c.blob, c.reason)
		wantAvailable(t, s.Container().NewBlockBlobClient("keys/k"), c.what+": the lease blob")
		if c.blob == "keys/k" {
			_, err = s.Holder(ctxT(t), "k")
			wantForeign(t, c.what+": Holder", err, c.blob, c.reason)
		}
		remove(t, s, c.blob)
	}
	g := acquire(t, s, "k", leasehold.NewOwnerID()) // the key works once they are gone
	if err := s.Release(ctxT(t), g); err != nil {
		t.Fatal(err)
	}
}

// wantForeign checks that err is a store error around a
// *leasehold.ForeignRecordError naming blob, whose reason names reason.
func wantForeign(t *testing.T, what string, err error, blob, reason string) {
	t.Helper()
	var fe *leasehold.ForeignRecordError
	if !errors.As(err, &fe) || !errors.Is(err, leasehold.ErrStore) || !errors.Is(err, leasehold.ErrForeignRecord) {
		t.Fatalf("%s: %v; want a store error around a ForeignRecordError", what, err)
	}
	if fe.Object != blob || !strings.Contains(fe.Reason, reason) {
		t.Fatalf("%s: object %q reason %q; want object %q, a reason naming %q", what, fe.Object, fe.Reason, blob, reason)
	}
}

// testBothDeleted deletes both the lease and the counter blob after a
// release: the next token is still above the last (the server's clock
// floors it). The floor is whole seconds (the Date header), so the test
// first waits until the server's clock is past the last token.
func testBothDeleted(t *testing.T, a *testserver.Azurite) {
	s := open(t, a, "planted")
	g1 := acquire(t, s, "both", leasehold.NewOwnerID())
	if err := s.Release(ctxT(t), g1); err != nil {
		t.Fatal(err)
	}
	remove(t, s, "keys/both")
	remove(t, s, "tokens/both")
	for {
		p, err := s.Container().GetProperties(ctxT(t), nil)
		if err != nil || p.Date == nil {
			t.Fatalf("the server's time: %v", err)
		}
		if uint64(p.Date.UnixMicro()) > g1.Token {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	g2 := acquire(t, s, "both", leasehold.NewOwnerID())
	if g2.Token <= g1.Token {
		t.Fatalf("after both blobs were deleted: token %d, earlier %d", g2.Token, g1.Token)
	}
}
