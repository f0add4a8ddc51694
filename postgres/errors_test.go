package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/postgres"
)

// pgOptions escapes a libpq options value for a URL query.
func pgOptions(o string) string { return strings.ReplaceAll(url.QueryEscape(o), "+", "%20") }

var modes = []postgres.Mode{postgres.LeaseRow, postgres.Advisory}

func req(key string) leasehold.AcquireRequest {
	return leasehold.AcquireRequest{Key: key, Owner: leasehold.NewOwnerID(), Label: "test", TTL: 30 * time.Second}
}

// wantStoreErr checks that err is a *leasehold.StoreError wrapping target.
func wantStoreErr(t *testing.T, what string, err, target error) {
	t.Helper()
	var se *leasehold.StoreError
	if !errors.As(err, &se) || !errors.Is(err, leasehold.ErrStore) {
		t.Fatalf("%s: got %v (%T), want a *leasehold.StoreError", what, err, err)
	}
	if target != nil && !errors.Is(err, target) {
		t.Fatalf("%s: got %v, want it to wrap %v", what, err, target)
	}
}

// noConnsAcquired checks that the store gave every pool connection back.
func noConnsAcquired(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	// pgxpool destroys a broken connection in the background: give it a
	// moment.
	for i := 0; ; i++ {
		n := pool.Stat().AcquiredConns()
		if n == 0 {
			return
		}
		if i == 500 {
			t.Fatalf("%d pool connections still acquired, want 0", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// handle is a store on one of the two kinds of pool, with a way to count
// the connections it has checked out.
type handle struct {
	s     postgres.Store
	inUse func() int
}

// kinds opens a store with opts on a pgxpool or a database/sql pool made
// with the extra connection parameters.
var kinds = map[string]func(t *testing.T, opts postgres.Options, params ...string) handle{
	"pool": func(t *testing.T, opts postgres.Options, params ...string) handle {
		p := newPool(t, params...)
		s, err := postgres.New(p, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return handle{s, func() int { return int(p.Stat().AcquiredConns()) }}
	},
	"db": func(t *testing.T, opts postgres.Options, params ...string) handle {
		db := newDB(t, params...)
		s, err := postgres.NewDB(db, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return handle{s, func() int { return db.Stats().InUse }}
	},
}

// noneInUse checks that the store gave every connection back.
func noneInUse(t *testing.T, h handle) {
	t.Helper()
	for i := 0; ; i++ {
		n := h.inUse()
		if n == 0 {
			return
		}
		if i == 500 {
			t.Fatalf("%d connections still in use, want 0", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// eventuallyFree waits until nobody holds key (an advisory lock whose
// session was discarded goes when the server sees the connection close).
func eventuallyFree(t *testing.T, s postgres.Store, key string) {
	t.Helper()
	end := time.Now().Add(20 * time.Second)
	for {
		_, err := s.Holder(ctxT(t), key)
		if errors.Is(err, leasehold.ErrNotHeld) {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("key %q still held (or Holder failed) 20s after a failed acquire: %v", key, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestMissingTableSaysMigrate(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			pool := newPool(t)
			opts := postgres.Options{Mode: mode, Schema: freshSchema(t)}
			s, err := postgres.New(pool, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, err = s.Acquire(ctxT(t), req("k"))
			wantStoreErr(t, "acquire before migration", err, postgres.ErrNotMigrated)
			if !strings.Contains(err.Error(), "migrat") {
				t.Errorf("error %q does not say to run the migration", err)
			}
			_, err = s.Holder(ctxT(t), "k")
			if mode == postgres.LeaseRow {
				wantStoreErr(t, "holder before migration", err, postgres.ErrNotMigrated)
			}
			// Nothing was created behind the user's back.
			var table any
			if err := pool.QueryRow(ctxT(t), "SELECT to_regclass($1)", `"`+opts.Schema+`".leasehold_leases`).Scan(&table); err != nil {
				t.Fatal(err)
			}
			if table != nil {
				t.Fatalf("acquire created the table %v", table)
			}
			noConnsAcquired(t, pool)

			// Concurrent and repeated migrations all succeed.
			var wg sync.WaitGroup
			errs := make([]error, 4)
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = postgres.Migrate(ctxT(t), pool, opts)
				}()
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatalf("concurrent Migrate: %v", err)
				}
			}
			if err := postgres.Migrate(ctxT(t), pool, opts); err != nil {
				t.Fatalf("Migrate again: %v", err)
			}
			g, err := s.Acquire(ctxT(t), req("k"))
			if err != nil {
				t.Fatalf("acquire after migration: %v", err)
			}
			if err := s.Release(ctxT(t), g); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestOddIdentifiers(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			pool := newPool(t)
			opts := postgres.Options{Mode: mode, Schema: `odd "schema" ` + freshSchema(t), Table: `my leases; DROP TABLE x; --"`}
			s := migrated(t, pool, opts)
			g, err := s.Acquire(ctxT(t), req("k"))
			if err != nil {
				t.Fatalf("acquire: %v", err)
			}
			if h, err := s.Holder(ctxT(t), "k"); err != nil || h.Token != g.Token {
				t.Fatalf("Holder = %+v, %v", h, err)
			}
			if err := s.Release(ctxT(t), g); err != nil {
				t.Fatal(err)
			}
		})
	}
	if _, err := postgres.New(newPool(t), postgres.Options{Table: strings.Repeat("t", 60)}); err == nil {
		t.Error("New accepted a 60-byte table name")
	}
	if _, err := postgres.New(newPool(t), postgres.Options{Mode: 7}); err == nil {
		t.Error("New accepted mode 7")
	}
}

func TestDatabaseDown(t *testing.T) {
	port, err := testserver.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	u := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=5", port)
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			_, err := postgres.OpenURL(ctxT(t), u+"&mode="+mode.String())
			wantStoreErr(t, "OpenURL of a dead server", err, postgres.ErrUnreachable)

			// A pool made before the server went away: every call fails
			// cleanly and nothing stays acquired.
			pool, err := pgxpool.New(ctxT(t), u)
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Close()
			s, err := postgres.New(pool, postgres.Options{Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, err = s.Acquire(ctxT(t), req("k"))
			wantStoreErr(t, "acquire on a dead server", err, postgres.ErrUnreachable)
			_, err = s.Holder(ctxT(t), "k")
			wantStoreErr(t, "holder on a dead server", err, postgres.ErrUnreachable)
			_, _, err = s.Subscribe(ctxT(t), "k")
			wantStoreErr(t, "subscribe on a dead server", err, postgres.ErrUnreachable)
			noConnsAcquired(t, pool)
		})
	}
}

func TestWrongPassword(t *testing.T) {
	u := func(pw string) string {
		return fmt.Sprintf("postgres://lh_pw:%s@127.0.0.1:%d/postgres?sslmode=disable", pw, srv.Port)
	}
	_, err := postgres.OpenURL(ctxT(t), u("wrong"))
	wantStoreErr(t, "wrong password", err, postgres.ErrAuth)
	if strings.Contains(err.Error(), "wrong") && strings.Contains(err.Error(), "lh_pw:wrong") {
		t.Errorf("error shows the password: %v", err)
	}
	s, err := postgres.OpenURL(ctxT(t), u(testserver.PostgresPassword))
	if err != nil {
		t.Fatalf("right password: %v", err)
	}
	_ = s.Close()
}

func TestReadOnlyServer(t *testing.T) {
	for _, mode := range modes {
		for kind, open := range kinds {
			t.Run(mode.String()+"/"+kind, func(t *testing.T) {
				opts := postgres.Options{Mode: mode, Schema: freshSchema(t)}
				rw := migrated(t, newPool(t), opts)
				// A session that cannot write, as on a hot standby.
				ro := open(t, opts, "options="+pgOptions("-c default_transaction_read_only=on"))
				_, err := ro.s.Acquire(ctxT(t), req("k"))
				wantStoreErr(t, "acquire on a read-only server", err, postgres.ErrReadOnly)
				if !strings.Contains(err.Error(), "read-only") {
					t.Errorf("error %q does not say read-only", err)
				}
				eventuallyFree(t, rw, "k")
				noneInUse(t, ro)
				// The key is usable and its token sequence intact.
				g, err := rw.Acquire(ctxT(t), req("k"))
				if err != nil {
					t.Fatalf("acquire on the primary: %v", err)
				}
				_ = rw.Release(ctxT(t), g)
			})
		}
	}
}

// blocker holds a lock that makes the store's next statement wait: the
// lease row's row lock, or (advisory) an exclusive lock on the token
// sequence, which nextval needs.
func blocker(t *testing.T, pool *pgxpool.Pool, mode postgres.Mode, schema string) pgx.Tx {
	t.Helper()
	tx, err := pool.Begin(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	q := fmt.Sprintf(`SELECT 1 FROM %q.leasehold_leases WHERE key = 'k' FOR UPDATE`, schema)
	if mode == postgres.Advisory {
		q = fmt.Sprintf(`ALTER SEQUENCE %q.leasehold_leases_token_seq INCREMENT BY 1`, schema)
	}
	if _, err := tx.Exec(ctxT(t), q); err != nil {
		t.Fatal(err)
	}
	return tx
}

func TestStatementTimeout(t *testing.T) {
	for _, mode := range modes {
		for kind, open := range kinds {
			t.Run(mode.String()+"/"+kind, func(t *testing.T) {
				admin := newPool(t)
				opts := postgres.Options{Mode: mode, Schema: freshSchema(t)}
				rw := migrated(t, admin, opts)
				g, err := rw.Acquire(ctxT(t), req("k")) // make the row exist
				if err != nil {
					t.Fatal(err)
				}
				if err := rw.Release(ctxT(t), g); err != nil {
					t.Fatal(err)
				}
				tx := blocker(t, admin, mode, opts.Schema)

				slow := open(t, opts, "options="+pgOptions("-c statement_timeout=300"))
				_, err = slow.s.Acquire(ctxT(t), req("k"))
				wantStoreErr(t, "acquire past statement_timeout", err, postgres.ErrStatementTimeout)
				noneInUse(t, slow)
				eventuallyFree(t, rw, "k") // an advisory lock goes with its discarded session

				// The caller's own deadline, on a pool without a statement
				// timeout: its error comes back as is, though the
				// statement stays queued on the server.
				plain := open(t, opts)
				ctx, cancel := context.WithTimeout(ctxT(t), 300*time.Millisecond)
				defer cancel()
				_, err = plain.s.Acquire(ctx, req("k"))
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("acquire past the caller's deadline: got %v, want context.DeadlineExceeded", err)
				}

				if err := tx.Rollback(ctxT(t)); err != nil {
					t.Fatal(err)
				}
				// Whatever the abandoned statements did on the server,
				// the key comes free (an acquire that ran on unseen is
				// cleared) and nothing stays checked out.
				eventuallyFree(t, rw, "k")
				noneInUse(t, slow)
				noneInUse(t, plain)
				g2, err := rw.Acquire(ctxT(t), req("k"))
				if err != nil {
					t.Fatalf("acquire after the timeouts: %v", err)
				}
				if g2.Token <= g.Token {
					t.Fatalf("token %d after the timeouts not greater than %d", g2.Token, g.Token)
				}
				_ = rw.Release(ctxT(t), g2)
			})
		}
	}
}

func TestClosedStore(t *testing.T) {
	for _, mode := range modes {
		s := migrated(t, newPool(t), postgres.Options{Mode: mode, Schema: freshSchema(t)})
		g, err := s.Acquire(ctxT(t), req("k"))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		_, err = s.Acquire(ctxT(t), req("k2"))
		wantStoreErr(t, "acquire after Close", err, leasehold.ErrClosed)
		if mode == postgres.Advisory {
			// Close ended the lease's session: the holder was told.
			select {
			case <-g.Lost:
			case <-time.After(20 * time.Second):
				t.Fatal("Close did not close the advisory grant's Lost")
			}
		}
	}
}
