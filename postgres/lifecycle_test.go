package postgres_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/postgres"
)

// waitClosed waits for ch to close; the bound only stops a broken test from
// hanging.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: not closed after 30s", what)
	}
}

// holderPID finds the backend that holds key's advisory lock.
func holderPID(t *testing.T, pool *pgxpool.Pool, s postgres.Store, key string) int {
	t.Helper()
	id := uint64(s.(*postgres.AdvisoryStore).LockID(key))
	var pid int
	err := pool.QueryRow(ctxT(t), `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
		AND classid::bigint = $1 AND objid::bigint = $2 AND objsubid = 1`, int64(id>>32), int64(uint32(id))).Scan(&pid)
	if err != nil {
		t.Fatalf("finding the holder's backend: %v", err)
	}
	return pid
}

func TestAdvisoryLostWhenSessionKilled(t *testing.T) {
	for name, open := range map[string]func(t *testing.T, opts postgres.Options) postgres.Store{
		"pool": func(t *testing.T, opts postgres.Options) postgres.Store { return migrated(t, newPool(t), opts) },
		"db": func(t *testing.T, opts postgres.Options) postgres.Store {
			s, err := postgres.NewDB(newDB(t), opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s
		},
	} {
		t.Run(name, func(t *testing.T) {
			admin := newPool(t)
			opts := postgres.Options{Mode: postgres.Advisory, Schema: freshSchema(t)}
			if err := postgres.Migrate(ctxT(t), admin, opts); err != nil {
				t.Fatal(err)
			}
			s := open(t, opts)
			g, err := s.Acquire(ctxT(t), req("k"))
			if err != nil {
				t.Fatal(err)
			}
			if g.Lost == nil {
				t.Fatal("advisory grant has no Lost channel")
			}
			pid := holderPID(t, admin, s, "k")
			if _, err := admin.Exec(ctxT(t), "SELECT pg_terminate_backend($1)", pid); err != nil {
				t.Fatal(err)
			}
			// The watcher sees the connection break without any renewal.
			waitClosed(t, g.Lost, "Lost after the holder's session was terminated")
			if _, err := s.Renew(ctxT(t), g); !errors.Is(err, leasehold.ErrNotHeld) {
				t.Fatalf("renew after the session died: got %v, want ErrNotHeld", err)
			}
			if err := s.Release(ctxT(t), g); !errors.Is(err, leasehold.ErrNotHeld) {
				t.Fatalf("release after the session died: got %v, want ErrNotHeld", err)
			}
			g2, err := s.Acquire(ctxT(t), req("k"))
			if err != nil {
				t.Fatalf("acquire after the session died: %v", err)
			}
			if g2.Token <= g.Token {
				t.Fatalf("token %d not greater than %d", g2.Token, g.Token)
			}
			if err := s.Release(ctxT(t), g2); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestAdvisoryIdleTimeoutEndsLease(t *testing.T) {
	pool := newPool(t)
	s := migrated(t, pool, postgres.Options{Mode: postgres.Advisory, Schema: freshSchema(t)})
	r := req("k")
	r.TTL = 200 * time.Millisecond
	g, err := s.Acquire(ctxT(t), r)
	if err != nil {
		t.Fatal(err)
	}
	// Nobody renews: the server ends the session at the TTL, and the lock
	// with it; the holder learns it from Lost.
	waitClosed(t, g.Lost, "Lost after the TTL passed without renewal")
	if _, err := s.Renew(ctxT(t), g); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("renew after expiry: got %v, want ErrNotHeld", err)
	}
	noConnsAcquired(t, pool)
}

func TestRestartMidHold(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			opts := postgres.Options{Mode: mode, Schema: freshSchema(t)}
			pool := newPool(t)
			s := migrated(t, pool, opts)
			g, err := s.Acquire(ctxT(t), req("k"))
			if err != nil {
				t.Fatal(err)
			}
			if err := srv.Restart(ctxT(t)); err != nil {
				t.Fatalf("restart: %v", err)
			}
			if mode == postgres.Advisory {
				// The lock died with the session: the holder is told
				// without asking, and cannot renew.
				waitClosed(t, g.Lost, "Lost after the server restarted")
				if _, err := s.Renew(ctxT(t), g); !errors.Is(err, leasehold.ErrNotHeld) {
					t.Fatalf("renew after restart: got %v, want ErrNotHeld", err)
				}
			} else {
				// The lease row is durable: the lease survives the
				// restart, still owned, until its TTL. Renewal works
				// once the pool has reconnected.
				var err error
				for i := 0; i < 100; i++ {
					if _, err = s.Renew(ctxT(t), g); err == nil {
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
				if err != nil {
					t.Fatalf("renew after restart: %v", err)
				}
				if h, err := s.Holder(ctxT(t), "k"); err != nil || h.Token != g.Token {
					t.Fatalf("Holder after restart = %+v, %v; want token %d", h, err, g.Token)
				}
				if err := s.Release(ctxT(t), g); err != nil {
					t.Fatal(err)
				}
			}
			var g2 leasehold.Grant
			for i := 0; i < 200; i++ {
				if g2, err = s.Acquire(ctxT(t), req("k")); err == nil {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if err != nil {
				t.Fatalf("acquire after restart: %v", err)
			}
			if g2.Token <= g.Token {
				t.Fatalf("token after restart %d not greater than %d", g2.Token, g.Token)
			}
			// The notifier reconnects too.
			ch, unsub, err := s.Subscribe(ctxT(t), "k")
			if err != nil {
				t.Fatalf("subscribe after restart: %v", err)
			}
			defer unsub()
			drain(ch)
			if err := s.Release(ctxT(t), g2); err != nil {
				t.Fatal(err)
			}
			waitWake(t, ch)
		})
	}
}

func drain(ch <-chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

func waitWake(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatal("no wake-up within 30s of the release")
	}
}

func TestNotifyOnRelease(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			opts := postgres.Options{Mode: mode, Schema: freshSchema(t)}
			holder := migrated(t, newPool(t), opts)
			waiterDB, err := postgres.NewDB(newDB(t), opts) // the other querier
			if err != nil {
				t.Fatal(err)
			}
			defer waiterDB.Close()
			waiterPool := migrated(t, newPool(t), opts)
			g, err := holder.Acquire(ctxT(t), req("k"))
			if err != nil {
				t.Fatal(err)
			}
			var chans []<-chan struct{}
			for _, w := range []postgres.Store{waiterDB, waiterPool} {
				ch, unsub, err := w.Subscribe(ctxT(t), "k")
				if err != nil {
					t.Fatalf("subscribe: %v", err)
				}
				defer unsub()
				drain(ch)
				chans = append(chans, ch)
			}
			other, unsubOther, err := waiterPool.Subscribe(ctxT(t), "other")
			if err != nil {
				t.Fatal(err)
			}
			defer unsubOther()
			drain(other)
			if err := holder.Release(ctxT(t), g); err != nil {
				t.Fatal(err)
			}
			for _, ch := range chans {
				waitWake(t, ch)
			}
			select {
			case <-other:
				t.Error("a release of k woke a subscriber of another key")
			default:
			}
		})
	}
}

func TestRenewMany(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			s := migrated(t, newPool(t, "pool_max_conns=40"), postgres.Options{Mode: mode, Schema: freshSchema(t)})
			n := 1000
			if mode == postgres.Advisory {
				n = 20 // one connection each
			}
			var gs []leasehold.Grant
			for i := 0; i < n; i++ {
				r := req(fmt.Sprintf("k%d", i))
				r.TTL = 5 * time.Second
				g, err := s.Acquire(ctxT(t), r)
				if err != nil {
					t.Fatal(err)
				}
				gs = append(gs, g)
			}
			batch := make([]leasehold.Grant, 0, n+2)
			for _, g := range gs {
				g.TTL = time.Minute
				batch = append(batch, g)
			}
			forged := batch[0]
			forged.Token++
			badTTL := batch[1]
			badTTL.TTL = -time.Second
			batch = append(batch, forged, badTTL)
			res, err := s.RenewMany(ctxT(t), batch)
			if err != nil {
				t.Fatalf("RenewMany: %v", err)
			}
			if len(res) != len(batch) {
				t.Fatalf("%d results for %d grants", len(res), len(batch))
			}
			for i := 0; i < n; i++ {
				if res[i].Err != nil || res[i].Grant.Token != gs[i].Token || res[i].Grant.TTL != time.Minute {
					t.Fatalf("result %d = %+v", i, res[i])
				}
			}
			if !errors.Is(res[n].Err, leasehold.ErrNotHeld) {
				t.Errorf("forged token: got %v, want ErrNotHeld", res[n].Err)
			}
			if !errors.Is(res[n+1].Err, leasehold.ErrInvalidTTL) {
				t.Errorf("bad TTL: got %v, want ErrInvalidTTL", res[n+1].Err)
			}
			h, err := s.Holder(ctxT(t), "k7")
			if err != nil {
				t.Fatal(err)
			}
			if h.Remaining <= 30*time.Second {
				t.Errorf("remaining after renewing for a minute = %s", h.Remaining)
			}
			for _, g := range gs {
				if err := s.Release(ctxT(t), g); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestAdvisoryCollisionDetected(t *testing.T) {
	admin := newPool(t)
	s := migrated(t, admin, postgres.Options{Mode: postgres.Advisory, Schema: freshSchema(t)})
	id := s.(*postgres.AdvisoryStore).LockID("k")
	// Another session holds k's lock id, published as a different key (as
	// if its key hashed to the same id).
	c, err := admin.Acquire(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	if _, err := c.Exec(ctxT(t), "SELECT set_config('application_name', 'lh1 00000000 5 99999999999999 other', false), pg_advisory_lock($1)", id); err != nil {
		t.Fatal(err)
	}
	// Acquire sees the key held (colliding keys exclude each other, which
	// is safe); Holder names the collision.
	_, err = s.Acquire(ctxT(t), req("k"))
	if !errors.Is(err, leasehold.ErrHeld) {
		t.Fatalf("acquire of a colliding key: got %v, want ErrHeld", err)
	}
	_, err = s.Holder(ctxT(t), "k")
	wantStoreErr(t, "holder of a colliding key", err, postgres.ErrLockIDCollision)
	// Someone else's advisory lock on that id, not published: held, by
	// someone unknown.
	if _, err := c.Exec(ctxT(t), "SELECT set_config('application_name', 'other app', false)"); err != nil {
		t.Fatal(err)
	}
	if h, err := s.Holder(ctxT(t), "k"); err != nil || h.Token != 0 {
		t.Fatalf("Holder of a key whose id another app holds: got %+v, %v; want held without details", h, err)
	}
	if _, err := c.Exec(ctxT(t), "SELECT pg_advisory_unlock($1), set_config('application_name', '', false)", id); err != nil {
		t.Fatal(err)
	}
	g, err := s.Acquire(ctxT(t), req("k"))
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Release(ctxT(t), g)
}

func TestList(t *testing.T) {
	s := migrated(t, newPool(t), postgres.Options{Schema: freshSchema(t)})
	var gs []leasehold.Grant
	for _, k := range []string{"a/1", "a/2", "a%", "b/1"} {
		g, err := s.Acquire(ctxT(t), req(k))
		if err != nil {
			t.Fatal(err)
		}
		gs = append(gs, g)
	}
	if err := s.Release(ctxT(t), gs[1]); err != nil {
		t.Fatal(err)
	}
	hs, err := s.(*postgres.LeaseStore).List(ctxT(t), "a/")
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 1 || hs[0].Key != "a/1" || hs[0].Token != gs[0].Token || hs[0].Label != "test" || hs[0].Remaining <= 0 {
		t.Fatalf("List(a/) = %+v", hs)
	}
	// The advisory store cannot list, and does not claim to (see
	// TestCapabilities).
	adv := migrated(t, newPool(t), postgres.Options{Mode: postgres.Advisory, Schema: freshSchema(t)})
	if _, ok := adv.(leasehold.Lister); ok {
		t.Fatal("the advisory store claims leasehold.Lister")
	}
}

func TestOpenURLParameters(t *testing.T) {
	schema := freshSchema(t)
	u := srv.ConnString("mode=advisory", "schema="+schema, "table=locks")
	if err := postgres.MigrateURL(ctxT(t), u); err != nil {
		t.Fatalf("MigrateURL: %v", err)
	}
	if err := postgres.MigrateURL(ctxT(t), u); err != nil {
		t.Fatalf("MigrateURL again: %v", err)
	}
	s, err := postgres.OpenURL(ctxT(t), u)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Mode() != postgres.Advisory || s.Info().Name != "postgres-advisory" {
		t.Fatalf("mode %v, info %+v", s.Mode(), s.Info())
	}
	var seq any
	if err := newPool(t).QueryRow(ctxT(t), "SELECT to_regclass($1)", schema+".locks_token_seq").Scan(&seq); err != nil || seq == nil {
		t.Fatalf("MigrateURL did not create %s.locks_token_seq: %v", schema, err)
	}
	for _, bad := range []string{"mysql://x/y", srv.ConnString("mode=lock"), "postgres://%zz"} {
		if _, err := postgres.OpenURL(ctxT(t), bad); err == nil {
			t.Errorf("OpenURL(%q) succeeded", bad)
		}
	}
	sql, err := postgres.MigrationSQL(postgres.Options{})
	if err != nil || sql == "" {
		t.Fatalf("MigrationSQL: %q, %v", sql, err)
	}
}
