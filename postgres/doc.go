// Package postgres is a leasehold store on PostgreSQL (pgx v5), for teams
// that already run a database: the best lock service is the one you already
// operate. It takes a *pgxpool.Pool ([New]), a database/sql *sql.DB opened
// with pgx's stdlib driver ([NewDB]), or a URL ([OpenURL]).
//
// It has two modes, each its own type over shared connection and
// notification code: [LeaseStore] (lease rows, the default) and
// [AdvisoryStore] (advisory locks). Options.Mode, or the URL's mode
// parameter, picks one; [New], [NewDB] and [OpenURL] return it as a [Store],
// the interface of what both have (leasehold.Store, leasehold.Notifier,
// leasehold.BatchRenewer, Mode, Migrate). Each type implements exactly the
// optional capabilities it has: only *LeaseStore is a leasehold.Lister, and
// only *AdvisoryStore has LockID; reach them with a type assertion:
//
//	s, err := postgres.New(pool, postgres.Options{}) // a *LeaseStore
//	...
//	holders, err := s.(*postgres.LeaseStore).List(ctx, "jobs/")
//
// Both mint fencing tokens that never go back, both wake waiters on release
// with LISTEN/NOTIFY, and both need the migration.
//
// # Migration
//
// The store never creates tables by itself. Run [Migrate] (or [MigrateDB],
// [MigrateURL], or `leasehold migrate --store postgres://...`) once; it is
// idempotent and safe to run concurrently. Until it has run every call fails
// with a *leasehold.StoreError wrapping [ErrNotMigrated], which says so.
// [MigrationSQL] prints the DDL for a DBA to apply instead. Options.Schema
// and Options.Table name the objects (quoted as identifiers); the defaults
// are the table "public"."leasehold_leases" and the sequence
// "public"."leasehold_leases_token_seq".
//
// # Lease-row mode (the default): LeaseStore
//
// One row per key: (key, owner, label, token, expires_at). Acquire is one
// statement, one round trip, with expiry judged by the server's clock:
//
//	INSERT INTO leases AS l (key, owner, label, token, expires_at)
//	VALUES ($key, $owner, $label, 1, clock_timestamp() + $ttl)
//	ON CONFLICT (key) DO UPDATE
//	  SET owner = excluded.owner, label = excluded.label,
//	      token = l.token + 1, expires_at = excluded.expires_at
//	  WHERE (l.owner IS NULL OR l.expires_at <= clock_timestamp())
//	    AND l.token > 0 AND l.token < 9223372036854775807
//	RETURNING l.token
//
// No row back means the key is held; only then a second statement reads
// the row for the *leasehold.HeldError: the holder's label, token and time
// left (a waiter looks again when that time runs out). A row leasehold
// would not have written (a token <= 0, an owner without expires_at, an
// expiry further ahead than twice MaxTTL) is refused with a
// *leasehold.ForeignRecordError naming it, and a free row whose token is
// the largest bigint with leasehold.ErrTokensExhausted; the advisory mode
// refuses a sequence at its maximum the same way.
//
// Rows are never deleted: release only clears owner and expires_at, so the
// row's token counter survives release, expiry and restarts, and every grant
// gets a token greater than all before it. Renew (UPDATE ... SET expires_at)
// and release check key, owner and token. A lease that expired but that
// nobody has taken since can still be renewed by its owner, keeping its
// token. TTLs have microsecond granularity (rounded up).
//
// The mode keeps no session state, so it works behind PgBouncer in
// transaction pooling mode; the tests run the conformance suite through
// PgBouncer 1.18 that way. PgBouncer before 1.21 does not keep named
// prepared statements in that mode: use default_query_exec_mode=cache_describe
// (or exec, or simple_protocol) in the URL. LISTEN and the waiter flags
// (below) need a session of their own: set Options.ListenConnString (URL
// parameter listen=) to a direct connection or a session-pooled one. Add
// cancel=close to the URL too: PgBouncer 1.18 can exit (FATAL "bad client
// state: 0", pgbouncer issue #801) when the client of a cancel request goes
// away before the cancel completes, and a context that ends mid-statement
// makes pgx send one; cancel=close drops the connection instead. Without
// the listen parameter wake-ups go astray (waiters fall back to their
// backoff, and a flag left on a shared server session makes releases of its
// key notify for nothing); leases themselves are unaffected.
//
// An acquire whose answer was lost (the caller's context ended mid-statement,
// the connection broke) may still have been applied; the store then clears
// the grant that request's owner id holds, on a detached context, so the key
// is not blocked until the TTL. It reads that grant's token first and
// releases owner and token together, so that a clean-up statement reaching
// the server late cannot clear a later grant, even one with the same owner
// id; what it cannot read in time is left to the TTL. [OpenURL] also
// configures its pool to send the server a cancel request when a context
// ends mid-statement (pgx's default drops the connection and lets the
// statement finish unseen); do the same on pools you build
// (pgconn.CancelRequestContextWatcherHandler).
//
// # Advisory-lock mode: AdvisoryStore
//
// Options.Mode = [Advisory] (URL mode=advisory) gives an [AdvisoryStore],
// which holds a session-level
// pg_try_advisory_lock on a connection taken from the pool for the lease's
// life (Grant.Private). Acquire is one statement on that connection:
//
//	SELECT pg_try_advisory_lock($id)  -- and only if it got the lock:
//	  nextval('leasehold_leases_token_seq'),                   -- the token
//	  set_config('idle_session_timeout', $ttl_ms, false),      -- the TTL
//	  set_config('application_name', 'lh1 <check> <token> <expiry> <label>', false)
//
// A held key's *leasehold.HeldError does not name the holder (that takes a
// scan of pg_locks, not worth paying on every contended attempt); Holder
// does, from pg_locks joined with pg_stat_activity.
//
// Tokens come from one sequence shared by all keys: strictly increasing per
// key, with gaps. The server ends a session that stays idle for its
// idle_session_timeout (PostgreSQL 14 or later), so a holder that stops
// renewing loses the lock after its TTL as in the lease-row mode; renewal
// is a statement on the lease's session that also re-publishes the expiry.
// When the session ends (that timeout, a server restart, a network failure,
// pg_terminate_backend) the lock is gone: a watcher on the idle connection
// sees it break and closes Grant.Lost at once, and Renew returns
// leasehold.ErrNotHeld. Release unlocks, restores the session's
// application_name and idle_session_timeout, and gives the connection back.
// A failed statement discards its session, which ends any lock it took.
//
// The lock ends at the server the moment its session breaks, and the holder
// learns it only when its watcher or next renewal sees the break: after a
// connection reset another session can take the lock while the first
// holder still believes it holds it. The fault-injection harness measures
// this window (docs/safety.md, "concurrent holders (the lease alone)"); it
// is why advisory-mode leases must fence their writes, like every lease.
//
// The mode writes no rows, so it is about as fast as bare advisory locks,
// but each held lease occupies a pool connection (size pool_max_conns for
// the leases you hold at once), Holder reports labels cut to fit
// application_name (63 bytes, ASCII), and it cannot list (it is not a
// leasehold.Lister: the server knows only the hashes of the keys). It
// does not survive PgBouncer in transaction pooling mode: the lock belongs
// to a server session that PgBouncer hands to other clients between
// transactions. Use the lease-row mode there.
//
// Lock ids: the 64-bit id of a key is the first 8 bytes of
// SHA-256("leasehold", schema, table, key); bigint advisory locks share one
// space per database with every other application's. Two distinct keys
// collide with probability about n²/2⁶⁵ for n keys (one in 3·10⁷ for a
// million keys). A collision never lets two holders in: the colliding keys
// exclude each other (an acquire sees the other key's lease as held). The
// holder publishes 32 more bits of the hash in its application_name, so
// Holder, which the client calls when a wait runs out, fails with
// [ErrLockIDCollision] instead of naming the wrong lease; use another key,
// another table name (which salts the hash) or the lease-row mode.
//
// # Wake-ups and batch renewal
//
// Subscribe LISTENs on one connection per store (hijacked from the
// pool); a release NOTIFYs the key in its own statement. NOTIFY is not free
// (it gives the transaction an id and a commit record, and committing
// notifiers are serialised server-wide), so a release notifies only when
// someone waits for the key. It learns that from the lock manager, without
// touching a table: the listening connection holds a shared advisory lock on
// the key's waiter flag (the two-int4 form of the key's lock id, a key space
// apart from the bigint locks) while it has subscribers for the key, and the
// release statement tries an exclusive transaction-level lock on the flag.
// Subscribe raises the flag before it returns, and the client subscribes
// before it tries to acquire, so a release that could let a waiter in
// always sees the flag. A notification lost while the listening connection
// is down costs a waiter its backoff, never correctness.
//
// [LeaseStore.RenewMany] renews any number of grants in one statement:
//
//	UPDATE leases t SET expires_at = clock_timestamp() + u.ttl * interval '1 microsecond'
//	FROM unnest($keys, $owners, $tokens, $ttls) AS u(key, owner, token, ttl)
//	WHERE t.key = u.key AND t.owner = u.owner AND t.token = u.token
//	RETURNING t.key, t.owner, t.token
//
// [AdvisoryStore.RenewMany] renews each lease on its own session, a few at
// a time.
//
// # Fencing
//
// The token is a fence. The resource keeps the highest token it accepted and
// rejects lower ones in the same statement as the write: the fence package's
// conditional UPDATE, which with pgx reads
//
//	tag, err := pool.Exec(ctx, `UPDATE accounts SET balance = $1, fence = $2 WHERE id = $3 AND fence <= $2`, bal, int64(lease.Token()), id) // 0 rows: fenced out
//
// or, through the fence package and its pgx adapter:
//
//	err := fence.Table{Name: "accounts"}.Update(ctx, fence.ExecFunc(func(ctx context.Context, q string, a ...any) (int64, error) { t, err := pool.Exec(ctx, q, a...); return t.RowsAffected(), err }), id, lease.Token(), map[string]any{"balance": bal})
//
// # Performance
//
// Measured side by side against one server on a shared 2-core machine (see
// the bench module): the lease-row mode runs about 1.1 to 1.3 times slower
// than a bare upsert + delete (its release checks for waiters and updates
// the row instead of deleting it, so the token survives), and 1.2 to 1.6
// times faster than cirello.io/pglock (which takes three round trips; at 64
// goroutines both cores are busy and the ratio follows CPU per cycle,
// client and server, which the bench module's BenchmarkCPUPerCycle
// measures); the advisory mode
// about 2 to 2.4 times slower than bare pg_try_advisory_lock +
// pg_advisory_unlock on one connection (it also mints a token, arms the
// idle_session_timeout that enforces the TTL, publishes and restores the
// holder's application_name) and about 2 times faster than pglock.
// Renewing 10,000 lease-row leases is one statement.
//
// # Errors
//
// Failures are *leasehold.StoreError values whose message says what is
// wrong, wrapping one of [ErrNotMigrated], [ErrReadOnly] (a standby, or
// default_transaction_read_only), [ErrStatementTimeout] (statement_timeout,
// lock_timeout), [ErrAuth], [ErrUnreachable] or [ErrLockIDCollision], and the
// pgx error. The caller's own context error is returned as is. No failed
// call leaves a lease counted as held or a connection checked out.
//
// # Safety
//
// What each deployment promises ("exclusive": at most one holder at a
// time; "fence": tokens strictly increase per key):
//
//   - Lease-row mode, one server with fsync on: exclusive while the
//     server's wall clock does not step forward; fence yes. Expiry is judged
//     by the server's wall clock (clock_timestamp()), so a forward step ends
//     every lease row early while its holder still believes it holds the
//     key, and a second holder gets it. docs/safety.md shows the same
//     mechanism on Redis, whose keys also expire by the server's wall
//     clock, under F11, "store server clock step"; the fault harness cannot
//     step PostgreSQL's clock without stepping the host's. Tokens are
//     unaffected (a counter in the row). Run the server with a slewing
//     clock discipline.
//   - Advisory mode, one server: exclusive while the lock's session lives;
//     after a connection reset another session can take the lock while the
//     first holder still believes it holds it (see above); fence yes.
//   - Failover to a synchronous standby: as one server. To an asynchronous
//     standby: the last commits can be lost, and with them the last grants
//     (a second holder) and the last tokens (they can be handed out again).
//
// Tokens are as durable as the server's commits: they never go back on a
// single server with fsync on, nor across a failover to a synchronous
// standby; a failover to an asynchronous standby can lose the last commits,
// and with them the last tokens.
package postgres
