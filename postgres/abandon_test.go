package postgres_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/postgres"
)

// TestLostReplyCleanupSparesLaterGrant replays the lost-reply interleaving,
// in which the delayed clean-up of an ambiguous acquire could free a later
// grant of the same owner, on the lease-row mode, with one owner id for both
// attempts (as a caller that retries with the same owner): attempt 1 is
// applied but its reply is lost, its clean-up is held in flight, attempt 1's
// grant ends, attempt 2 wins the key, and only then does the clean-up reach
// the server. It must leave attempt 2's grant alone. Without the hold, the
// clean-up frees the key at once.
func TestLostReplyCleanupSparesLaterGrant(t *testing.T) {
	for _, c := range []struct {
		name string
		hold postgres.Hold
	}{
		{"in_time", postgres.HoldNothing},
		{"write_late", postgres.HoldWrites},
		{"all_late", postgres.HoldEverything},
	} {
		t.Run(c.name, func(t *testing.T) {
			pool := newPool(t)
			opts := postgres.Options{Schema: freshSchema(t)}
			s := migrated(t, pool, opts)
			f := postgres.LoseAcquireReply(s, c.hold)
			r := req("k")

			if _, err := s.Acquire(ctxT(t), r); err == nil {
				t.Fatal("attempt 1 (reply lost) succeeded")
			}
			if c.hold == postgres.HoldNothing {
				if h, err := s.Holder(ctxT(t), "k"); !errors.Is(err, leasehold.ErrNotHeld) {
					t.Fatalf("after a lost reply and an undelayed clean-up: holder %+v, %v; want the key free", h, err)
				}
				return
			}
			if f.Held() == 0 {
				t.Fatal("the clean-up sent nothing that could be held: the test does not reach its path")
			}
			// Attempt 1's grant, if the clean-up has not cleared it yet,
			// ends as at its TTL.
			if _, err := pool.Exec(ctxT(t), fmt.Sprintf(`UPDATE %q.leasehold_leases SET expires_at = clock_timestamp() - interval '1 second' WHERE key = 'k'`, opts.Schema)); err != nil {
				t.Fatal(err)
			}
			g2, err := s.Acquire(ctxT(t), r)
			if err != nil {
				t.Fatalf("attempt 2: %v", err)
			}
			if err := f.Deliver(ctxT(t)); err != nil {
				t.Fatalf("delivering the late clean-up: %v", err)
			}
			h, err := s.Holder(ctxT(t), "k")
			if err != nil || h.Token != g2.Token {
				t.Fatalf("after the late clean-up: holder %+v, %v; want attempt 2's grant (token %d) to hold", h, err, g2.Token)
			}
			if _, err := s.Renew(ctxT(t), g2); err != nil {
				t.Fatalf("renewing attempt 2's grant after the late clean-up: %v", err)
			}
			if err := s.Release(ctxT(t), g2); err != nil {
				t.Fatal(err)
			}
		})
	}
}
