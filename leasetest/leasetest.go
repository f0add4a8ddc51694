// Package leasetest is the conformance suite for leasehold stores, in the
// manner of testing/slogtest and testing/fstest: a store's own tests call Run
// with a way to open the store, and every subtest names the rule it checks.
// The rules and their reasons are stated in the repository's docs/design.md,
// which numbers them (1 exclusive acquire, 2 renew by owner, 3 token-checked
// release, 4 opaque keys, 5 increasing tokens, 8-10 holder-side time and
// loss, 13-14 waiting); each rule's function links to its section there.
//
// The suite drives the Store contract directly and through a
// leasehold.Client, so both the store and the lifecycle on top of it are
// checked. Run it against the real server, never an imitation.
package leasetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/leasehold-go/leasehold"
)

// Config tells Run how to reach the store under test.
type Config struct {
	// Open returns a new handle on the store under test. Every call must
	// reach the same backing data (the same server or file), so the suite
	// can close one handle and open another. Run closes what it opens.
	Open func(t testing.TB) leasehold.Store
	// ShortTTL is the TTL of the expiry and renewal tests. Zero means
	// 300 ms, raised to the store's MinTTL.
	ShortTTL time.Duration
	// Restart, if set, kills and restarts the backing server (or
	// simulates a machine crash for a file store). The suite then checks
	// that tokens keep increasing and that no lease is silently kept.
	Restart func(t testing.TB)
	// Contenders is the number of concurrent acquirers in the exclusivity
	// test. Zero means 100.
	Contenders int
	// IgnoreGoroutines names functions whose goroutines belong to the
	// store's client library and may outlive a test on their own schedule
	// (a redial loop sleeping between tries). Goroutines with any of these
	// functions on their stack are not reported as leaks.
	IgnoreGoroutines []string
}

type suite struct {
	cfg   Config
	ttl   time.Duration                                                              // ShortTTL
	newRW func(c *leasehold.Client, key string, ttl time.Duration) (rwLocker, error) // the read-write lock the rules drive
}

// Run runs the conformance suite. Each subtest uses its own keys, so a
// failure in one does not cascade into the others.
func Run(t *testing.T, cfg Config) {
	t.Helper()
	if cfg.Open == nil {
		t.Fatal("leasetest: Config.Open is nil")
	}
	probe := cfg.Open(t)
	info := probe.Info()
	_ = probe.Close()
	if cfg.ShortTTL == 0 {
		cfg.ShortTTL = 300 * time.Millisecond
	}
	if cfg.ShortTTL < info.MinTTL {
		cfg.ShortTTL = info.MinTTL
	}
	if cfg.Contenders == 0 {
		cfg.Contenders = 100
	}
	s := &suite{cfg: cfg, ttl: cfg.ShortTTL, newRW: newRWLock}
	opts := []goleak.Option{goleak.IgnoreCurrent()}
	for _, f := range cfg.IgnoreGoroutines {
		opts = append(opts, goleak.IgnoreAnyFunction(f))
	}
	tests := []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"rule1_acquire_is_exclusive_under_contention", s.exclusive},
		{"rule1_held_error_names_holder", s.heldError},
		{"rule1_expiry_lets_another_owner_in", s.expiryLetsIn},
		{"rule2_renew_by_owner_extends", s.renewExtends},
		{"rule2_renew_and_release_by_wrong_owner_refused_and_harmless", s.wrongOwner},
		{"rule2_renew_and_release_with_stale_token_refused_and_harmless", s.staleToken},
		{"rule2_renew_after_takeover_fails", s.renewAfterTakeover},
		{"rule2_abandoned_acquire_cleanup_spares_later_grant", s.ambiguousCleanup},
		{"rule3_release_frees_key_at_once", s.releaseFrees},
		{"rule3_release_on_cancelled_context_still_frees", s.releaseCancelled},
		{"rule4_keys_are_opaque", s.opaqueKeys},
		{"rule4_bad_keys_ttls_and_waits_refused", s.badInput},
		{"rule5_token_increases_across_release", s.tokenRelease},
		{"rule5_token_increases_across_expiry", s.tokenExpiry},
		{"rule5_token_increases_across_reopen", s.tokenReopen},
		{"rule5_token_increases_across_restart", s.tokenRestart},
		{"rule9_client_renews_before_expiry", s.clientRenews},
		{"rule10_refused_renewal_cancels_lease_context", s.refusalCancels},
		{"rule10_do_releases_on_panic", s.doPanics},
		{"rule13_waiter_gets_key_after_release", s.waiterWakes},
		{"rule13_waiters_on_a_hot_key_hold_across_renewals", s.hotKeyWaiters},
		{"rule14_waiter_that_gives_up_gets_held_error", s.waiterGivesUp},
		{"rule14_closed_store_ends_waiting_acquire", s.closedStoreEndsWaiter},
		{"rule14_client_close_ends_waiting_acquire_with_err_closed", s.clientCloseEndsWaiter},
		{"minhold_respected_after_an_early_release", s.minHold},
		{"cancellation_honoured_everywhere", s.cancellation},
		{"election_one_leader_at_a_time_epochs_increase", s.electionOneLeader},
		{"election_observer_sees_each_leader_and_store_loss", s.electionObserver},
		{"election_paused_leader_loses_before_next_term", s.electionPausedLeaderLoses},
		{"semaphore_at_most_n_holders_under_contention", s.semaphoreAtMostN},
		{"semaphore_crashed_holders_slot_frees_at_its_ttl", s.semaphoreCrashedHolders},
		{"rwlock_never_a_reader_with_a_writer", s.rwNeverReaderWithWriter},
		{"rwlock_waiting_writer_gets_in_within_readers_ttl", s.rwWriterGetsIn},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.fn)
	}
	t.Run("no_goroutine_leaks", func(t *testing.T) {
		goleak.VerifyNone(t, opts...)
	})
}

// open opens a handle that is closed when t ends.
func (s *suite) open(t *testing.T) leasehold.Store {
	t.Helper()
	st := s.cfg.Open(t)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// client returns a client over st, closed when t ends.
func (s *suite) client(t *testing.T, st leasehold.Store, o *leasehold.Options) *leasehold.Client {
	t.Helper()
	c, err := leasehold.New(st, o)
	if err != nil {
		t.Fatalf("leasehold.New: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// key returns a key unique to the test.
func key(t *testing.T, suffix string) string {
	return "leasetest/" + t.Name() + "/" + time.Now().Format("150405.000000000") + "/" + suffix
}

func req(k string, ttl time.Duration) leasehold.AcquireRequest {
	return leasehold.AcquireRequest{Key: k, Owner: leasehold.NewOwnerID(), Label: "leasetest", TTL: ttl}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// acquireEventually retries r until it is granted, for up to limit.
func acquireEventually(t *testing.T, st leasehold.Store, r leasehold.AcquireRequest, limit time.Duration) leasehold.Grant {
	t.Helper()
	end := time.Now().Add(limit)
	for {
		g, err := st.Acquire(ctxT(t), r)
		if err == nil {
			return g
		}
		if time.Now().After(end) {
			t.Fatalf("key %q not granted within %s: last error %v", r.Key, limit, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// takeover grants k to one owner for the short TTL, lets it expire
// unrenewed, and returns that grant and the one another owner (asking for
// ttl) got once it had.
func (s *suite) takeover(t *testing.T, st leasehold.Store, k string, ttl time.Duration) (expired, next leasehold.Grant) {
	t.Helper()
	expired, err := st.Acquire(ctxT(t), req(k, s.ttl))
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	return expired, acquireEventually(t, st, req(k, ttl), 10*s.ttl+10*time.Second)
}

// probeHeld checks that another owner cannot acquire k. A store failure (a
// quorum store whose masters are slow to answer under load) is
// inconclusive, not a failure of exclusivity, and is logged. A grant is
// returned for the caller to judge: it is a violation unless the holder's
// own time had run out (see the callers).
func probeHeld(t *testing.T, st leasehold.Store, k string, ttl time.Duration, what string) (granted *leasehold.Grant) {
	t.Helper()
	g, err := st.Acquire(ctxT(t), req(k, ttl))
	switch {
	case err == nil:
		return &g
	case errors.Is(err, leasehold.ErrHeld):
	case errors.Is(err, leasehold.ErrStore):
		t.Logf("%s: inconclusive, the store failed: %v", what, err)
	default:
		t.Fatalf("%s: got %v, want ErrHeld", what, err)
	}
	return nil
}
