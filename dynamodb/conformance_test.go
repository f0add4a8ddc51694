package dynamodb_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/dynamodb"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/leasetest"
)

// storeURL is the dynamodb:// URL of table on endpoint, with the test
// credentials in the URL, then more parameters (each "&name=value").
func storeURL(endpoint, table string, more ...string) string {
	u := "dynamodb://" + table + "?endpoint=" + endpoint + "&region=" + testserver.DynaliteRegion +
		"&access_key=" + testserver.DynaliteAccessKey + "&secret_key=" + testserver.DynaliteSecretKey
	for _, m := range more {
		u += m
	}
	return u
}

// open returns a store on table at endpoint (which must exist), closed
// when t ends.
func open(t testing.TB, endpoint, table string, more ...string) *dynamodb.Store {
	t.Helper()
	s, err := dynamodb.OpenURL(ctxT(t), storeURL(endpoint, table, more...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// migrate creates tables at endpoint.
func migrate(t testing.TB, endpoint string, tables ...string) {
	t.Helper()
	for _, table := range tables {
		if err := dynamodb.MigrateURL(ctxT(t), storeURL(endpoint, table)); err != nil {
			t.Fatalf("migrate %s: %v", table, err)
		}
	}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// shortTTL is the conformance suite's TTL: twice the store's minimum, as
// dynalite (one Node.js process) answers every test's requests, and a
// renewal every 50 ms of a 1 s TTL timed out on a loaded 2-core machine.
const shortTTL = 2 * time.Second

// TestDynalite runs the conformance suite (with its election rules) in
// both expiry modes and the store's own tests on one dynalite, its tables
// on disk so that they survive the suite's restart. dynalite missing fails
// the test: NewDynalite does not skip.
func TestDynalite(t *testing.T) {
	d := testserver.NewDynalite(t, testserver.DynaliteOptions{OnDisk: true})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("dynalite (running %v): %s", d.Running(), d.Log())
		}
	})
	ep := d.Endpoint()
	migrate(t, ep, "conformance", "skewed", "badinput", "planted", "tokens", "clocks")
	restart := func(t testing.TB) {
		if err := d.Restart(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("conformance", func(t *testing.T) {
		leasetest.Run(t, leasetest.Config{
			Open:       func(t testing.TB) leasehold.Store { return open(t, ep, "conformance") },
			ShortTTL:   shortTTL,
			Contenders: 16,
			Restart:    restart,
		})
	})
	t.Run("conformance_bounded_skew", func(t *testing.T) {
		leasetest.Run(t, leasetest.Config{
			Open:       func(t testing.TB) leasehold.Store { return open(t, ep, "skewed", "&max_skew=200ms") },
			ShortTTL:   shortTTL,
			Contenders: 16,
		})
	})
	t.Run("expiry_is_clock_free", func(t *testing.T) { testClockFree(t, ep) })
	t.Run("bounded_skew_trusts_the_written_deadline", func(t *testing.T) { testBoundedSkew(t, ep) })
	t.Run("deleted_item_does_not_restart_the_token", func(t *testing.T) { testDeleted(t, ep) })
	t.Run("bad_input", func(t *testing.T) { testBadInput(t, d) })
	t.Run("tokens_exhausted", func(t *testing.T) { testTokensExhausted(t, ep) })
	t.Run("planted_items_refused", func(t *testing.T) { testPlanted(t, ep) })
	t.Run("lost_replies", func(t *testing.T) { testLostReplies(t, ep) })
	t.Run("requests_per_call", func(t *testing.T) { testRequests(t, ep) })
	t.Run("migrate_creates_the_table", func(t *testing.T) { testMigrate(t, ep) })
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

// itemKey is the DynamoDB key of key's item.
func itemKey(key string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{dynamodb.KeyAttribute: &types.AttributeValueMemberS{Value: key}}
}
