package etcd_test

import (
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

// testRenewFreshGrant renews each grant the moment it is made (as a
// leasehold.Client does after a waiting acquire), alternately by Renew after
// AcquireWait and by RenewMany after Acquire, through a client that spreads
// its requests over every member. A member that has not yet applied the
// grant's put must not answer the renewal from its own state and refuse a
// grant made a moment before.
func testRenewFreshGrant(t *testing.T, c *testserver.Etcd) {
	st := newStore(t, c, nil)
	k := uniqueKey(t, "k")
	for i := range 60 {
		var g leasehold.Grant
		var err error
		if i%2 == 0 {
			g, err = st.AcquireWait(tctx(t), areq(k, 5*time.Second))
		} else {
			g, err = st.Acquire(tctx(t), areq(k, 5*time.Second))
		}
		if err != nil {
			t.Fatalf("acquire %d: %v", i, err)
		}
		how := "Renew"
		if i%2 == 0 {
			_, err = st.Renew(tctx(t), g)
		} else {
			how = "RenewMany"
			var res []leasehold.RenewResult
			if res, err = st.RenewMany(tctx(t), []leasehold.Grant{g}); err == nil {
				err = res[0].Err
			}
		}
		if err != nil {
			t.Fatalf("%s of grant %d (token %d) right after it was made: %v", how, i, g.Token, err)
		}
		if err := st.Release(tctx(t), g); err != nil {
			t.Fatalf("release %d: %v", i, err)
		}
	}
}
