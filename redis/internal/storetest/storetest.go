// Package storetest holds the redis and redlock stores' tests that do not
// depend on the client library, so that the goredis and rueidis modules
// run the same checks against real redis-server processes.
package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
	lhredis "github.com/leasehold-go/leasehold/redis"
)

// Env is what the tests need from an adapter module.
type Env struct {
	// Server is the redis-server of the tests; some restart it.
	Server *testserver.Redis
	// Dir holds the folders of servers the tests start.
	Dir string
	// OpenURL is the adapter's OpenURL.
	OpenURL func(ctx context.Context, rawURL string) (leasehold.Store, error)
	// NewClient returns an adapter over a new client of the server at
	// addr; the client is closed when t ends.
	NewClient func(t testing.TB, addr string) lhredis.Client
}

// Run runs every test of the redis store.
func Run(t *testing.T, env Env) {
	e := &env
	for _, tc := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"conformance_openurl_with_restarts", e.conformanceOpenURL},
		{"conformance_user_client", e.conformanceUserClient},
		{"restart_without_persistence_tokens_increase", e.restartTokens},
		{"token_counter_ahead_of_clock_wins", e.counterAhead},
		{"token_counter_ahead_repaired_lease_and_counter_agree", e.counterAheadRepaired},
		{"garbage_counter_is_an_error", e.garbageCounter},
		{"failed_acquire_leaves_counter_untouched", e.badCounterUntouched},
		{"tokens_exhausted_refused_nothing_held", e.tokensExhausted},
		{"planted_values_refused_as_foreign", e.plantedValues},
		{"proposed_token_refused_or_granted_exactly", e.proposedToken},
		{"noscript_falls_back_to_eval", e.noScript},
		{"dead_server_clean_errors", e.deadServer},
		{"auth_refused", e.authRefused},
		{"read_only_replica", e.readOnlyReplica},
		{"renew_many_round_trips_and_results", e.renewMany},
		{"waiter_wakes_on_release_not_backoff", e.wakeOnRelease},
		{"connection_loss_wakes_waiters", e.wakeOnConnectionLoss},
		{"subscription_shared_and_dropped", e.subscriptionLifetime},
		{"info_reports_safe_tokens_with_caveat", e.info},
		{"list_by_prefix", e.list},
	} {
		t.Run(tc.name, tc.fn)
	}
}

// Ctx returns a context that ends with t, after a minute at most.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Req is an acquire request with a new owner.
func Req(key string, ttl time.Duration) leasehold.AcquireRequest {
	return leasehold.AcquireRequest{Key: key, Owner: leasehold.NewOwnerID(), Label: "test", TTL: ttl}
}

// Key returns a key unique to t.
func Key(t testing.TB, name string) string {
	return fmt.Sprintf("%s/%s/%d", t.Name(), name, time.Now().UnixNano())
}

// Restart restarts servers without persistence.
func Restart(t testing.TB, ss ...*testserver.Redis) {
	t.Helper()
	for _, s := range ss {
		if err := s.Restart(Ctx(t)); err != nil {
			t.Fatalf("restart redis-server on %s: %v", s.Addr(), err)
		}
	}
}

func (e *Env) open(t testing.TB) *lhredis.Store {
	t.Helper()
	s, err := e.OpenURL(Ctx(t), e.Server.URL())
	if err != nil {
		t.Fatalf("OpenURL: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s.(*lhredis.Store)
}

func (e *Env) command(t testing.TB, s *testserver.Redis, args ...string) string {
	t.Helper()
	r, err := s.Command(Ctx(t), args...)
	if err != nil {
		t.Fatalf("%s on %s: %v", strings.Join(args, " "), s.Addr(), err)
	}
	return r
}
