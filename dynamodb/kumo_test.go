package dynamodb_test

import (
	"testing"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/leasetest"
)

// TestKumo cross-checks the store on a second DynamoDB implementation,
// kumo (Go; dynalite is Node.js on LevelDB): the conformance suite with its
// election rules in the default, clock-free expiry mode, clock-free expiry
// and a deleted item (the bounded-skew mode differs only in the store's own
// arithmetic, which TestDynalite covers). kumo compares numbers as float64, so the tests of tokens near
// 2^64-1 run on dynalite only (TestDynalite); kumo keeps its tables in
// memory, so the suite's server restart is not run here. kumo missing
// fails the test: NewKumo does not skip.
func TestKumo(t *testing.T) {
	k := testserver.NewKumo(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kumo (running %v): %s", k.Running(), k.Log())
		}
	})
	ep := k.Endpoint()
	migrate(t, ep, "conformance", "clocks")
	t.Run("conformance", func(t *testing.T) {
		leasetest.Run(t, leasetest.Config{
			Open:       func(t testing.TB) leasehold.Store { return open(t, ep, "conformance") },
			ShortTTL:   shortTTL,
			Contenders: 16,
		})
	})
	t.Run("expiry_is_clock_free", func(t *testing.T) { testClockFree(t, ep) })
	t.Run("deleted_item_does_not_restart_the_token", func(t *testing.T) { testDeleted(t, ep) })
}
