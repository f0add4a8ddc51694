package postgres

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold-go/leasehold"
)

// cancelGrace is how long a cancelled statement's connection waits for the
// server to confirm the cancel before it is dropped.
const cancelGrace = 2 * time.Second

// OpenURL opens a store from a postgres:// or postgresql:// URL (what
// `leasehold --store` takes). Besides pgx's own parameters (sslmode,
// pool_max_conns, default_query_exec_mode, application_name, options, ...) it
// reads, and removes before connecting:
//
//	mode=lease|advisory   the mode (default lease)
//	schema=NAME           Options.Schema (default public)
//	table=NAME            Options.Table (default leasehold_leases)
//	listen=CONNSTRING     Options.ListenConnString (a direct connection for LISTEN)
//	cancel=request|close  what a caller's context ending mid-statement does
//	                      (default request; close behind PgBouncer, see below)
//
// For example postgres://app:secret@db:5432/app?mode=advisory&pool_max_conns=20.
// It returns a *LeaseStore, or an *AdvisoryStore for mode=advisory.
//
// It makes its own *pgxpool.Pool, which Close closes, configured to send
// the server a cancel request when a caller's context ends mid-statement
// (pgx's default drops the connection, and the server may finish the
// statement unseen). Behind PgBouncer give cancel=close: the connection is
// dropped instead, because PgBouncer (1.18 at least; pgbouncer issue #801)
// can exit with "FATAL ... disconnect_client(): bad client state: 0" when a
// cancel request's client goes away before the cancel completes, which a
// short context deadline makes routine. It pings the server so that a wrong
// address or password is reported here (as a *leasehold.StoreError). It
// does not check that the migration has run: `leasehold migrate` opens the
// store this way too.
func OpenURL(ctx context.Context, rawURL string) (Store, error) {
	opts, cfg, err := parseURL(rawURL)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: invalid store URL: %w", err)
	}
	s, err := newStore(poolQuerier{pool}, opts, pool)
	if err != nil {
		pool.Close()
		return nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		_ = s.Close() // closes the pool
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &leasehold.StoreError{Store: s.Info().Name, Op: "open", Err: explain(err, objectNames(opts).table)}
	}
	return s, nil
}

// parseURL reads OpenURL's parameters out of rawURL and returns the
// resolved Options and the pool's configuration.
func parseURL(rawURL string) (Options, *pgxpool.Config, error) {
	var opts Options
	u, err := url.Parse(rawURL)
	if err != nil {
		return opts, nil, fmt.Errorf("postgres: invalid store URL: %w", err)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return opts, nil, fmt.Errorf("postgres: store URL scheme is %q, want postgres:// or postgresql://", u.Scheme)
	}
	q := u.Query()
	switch m := q.Get("mode"); m {
	case "", "lease":
		opts.Mode = LeaseRow
	case "advisory":
		opts.Mode = Advisory
	default:
		return opts, nil, fmt.Errorf("postgres: store URL mode is %q, want lease or advisory", m)
	}
	opts.Schema, opts.Table, opts.ListenConnString = q.Get("schema"), q.Get("table"), q.Get("listen")
	if opts, err = opts.resolved(); err != nil {
		return opts, nil, err
	}
	cancelRequest := true
	switch c := q.Get("cancel"); c {
	case "", "request":
	case "close":
		cancelRequest = false
	default:
		return opts, nil, fmt.Errorf("postgres: store URL cancel is %q, want request or close", c)
	}
	for _, k := range []string{"mode", "schema", "table", "listen", "cancel"} {
		q.Del(k)
	}
	u.RawQuery = q.Encode()
	cfg, err := pgxpool.ParseConfig(u.String())
	if err != nil {
		return opts, nil, fmt.Errorf("postgres: invalid store URL: %w", err)
	}
	// When a caller's context ends mid-statement, ask the server to cancel
	// the statement (and keep the connection) instead of dropping the
	// connection and leaving the statement to run to completion unseen.
	// With cancel=close, keep pgx's default: drop the connection.
	if cancelRequest {
		cfg.ConnConfig.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
			return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, DeadlineDelay: cancelGrace}
		}
	}
	return opts, cfg, nil
}

// CheckURL reports what is wrong with rawURL as a store URL, as OpenURL
// would, without contacting anything; nil when OpenURL can use it.
func CheckURL(rawURL string) error {
	_, _, err := parseURL(rawURL)
	return err
}
