package s3_test

import (
	"context"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/leasetest"
	"github.com/leasehold-go/leasehold/s3"
)

// storeURL is the s3:// URL of bucket on v, with the root credentials in
// the URL.
func storeURL(v *testserver.Versity, bucket string) string {
	return "s3://" + bucket + "/lh?endpoint=" + v.Endpoint() + "&region=" + testserver.VersityRegion +
		"&access_key=" + testserver.VersityAccessKey + "&secret_key=" + testserver.VersitySecretKey
}

// open returns a store on bucket of v (which must exist), closed when t
// ends.
func open(t testing.TB, v *testserver.Versity, bucket string) *s3.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := s3.OpenURL(ctx, storeURL(v, bucket))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestVersity runs the conformance suite and the store's own tests on one
// versitygw. versitygw missing fails the test: NewVersity does not skip.
func TestVersity(t *testing.T) {
	v := testserver.NewVersity(t, testserver.VersityOptions{Buckets: []string{"conformance", "deleted", "badinput", "planted"}})
	t.Run("conformance", func(t *testing.T) {
		leasetest.Run(t, leasetest.Config{
			Open:       func(t testing.TB) leasehold.Store { return open(t, v, "conformance") },
			Contenders: 16,
			Restart: func(t testing.TB) {
				if err := v.Restart(ctxT(t)); err != nil {
					t.Fatal(err)
				}
			},
		})
	})
	t.Run("deleted_objects_do_not_restart_the_token", func(t *testing.T) { testDeleted(t, v) })
	t.Run("deleted_while_held", func(t *testing.T) { testDeletedWhileHeld(t, v) })
	t.Run("bad_input", func(t *testing.T) { testBadInput(t, v) })
	t.Run("tokens_exhausted", func(t *testing.T) { testTokensExhausted(t, v) })
	t.Run("planted_records_refused", func(t *testing.T) { testPlanted(t, v) })
	t.Run("unsafe_servers_refused", func(t *testing.T) { testUnsafe(t, v) })
	t.Run("lost_replies", func(t *testing.T) { testLostReplies(t, v) })
	t.Run("migrate_creates_the_bucket", func(t *testing.T) { testMigrate(t, v) })
	t.Run("calls", func(t *testing.T) { testCalls(t, v) })
}

func acquire(t testing.TB, s leasehold.Store, key string) leasehold.Grant {
	t.Helper()
	g, err := s.Acquire(ctxT(t), leasehold.AcquireRequest{Key: key, Owner: leasehold.NewOwnerID(), Label: "test", TTL: 15 * time.Second})
	if err != nil {
		t.Fatalf("acquire %s: %v", key, err)
	}
	return g
}

func release(t testing.TB, s leasehold.Store, g leasehold.Grant) {
	t.Helper()
	if err := s.Release(ctxT(t), g); err != nil {
		t.Fatalf("release %s: %v", g.Key, err)
	}
}
