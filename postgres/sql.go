package postgres

import (
	"strings"
)

// statements holds the SQL of one Store, built once from its Options so that
// identifiers are quoted in one place and pgx can cache the prepared
// statements.
type statements struct {
	leaseAcquire, leaseAbandon, leaseRenew, leaseRelease, leaseHolder, leaseList, leaseRenewMany string
	advAcquire, advRenew, advRelease, advHolder                                                  string
}

// names are the quoted, schema-qualified names of the store's objects.
type names struct {
	schema, table, seq string
}

func objectNames(o Options) names {
	s := quoteIdent(o.Schema)
	return names{
		schema: s,
		table:  s + "." + quoteIdent(o.Table),
		seq:    s + "." + quoteIdent(o.Table+"_token_seq"),
	}
}

// ttlExpr turns a TTL parameter in microseconds into an interval.
const usInterval = "::bigint::float8 * interval '1 microsecond'"

// nowMS is the server's clock in Unix milliseconds.
const nowMS = "(date_part('epoch', clock_timestamp()) * 1000)::bigint"

// notifyIfWaited notifies channel with key as payload if anyone holds the
// key's waiter flag (hi, lo) in shared mode; it is true if it notified.
func notifyIfWaited(hi, lo, channel, key string) string {
	return `CASE WHEN pg_try_advisory_xact_lock(` + hi + `::int4, ` + lo + `::int4) THEN false
  ELSE pg_notify(` + channel + `::text, ` + key + `::text) IS NOT NULL END`
}

// advisoryHolderApp finds the application_name of the session holding the
// advisory lock whose halves are the parameters classid and objid.
func advisoryHolderApp(classid, objid string) string {
	return `(SELECT a.application_name FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid
	  WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())
	    AND l.classid::bigint = ` + classid + ` AND l.objid::bigint = ` + objid + ` AND l.objsubid = 1 AND l.granted LIMIT 1)`
}

func buildStatements(n names) statements {
	r := strings.NewReplacer("{T}", n.table, "{SEQ}", quoteLiteral(n.seq), "{US}", usInterval, "{NOWMS}", nowMS)
	var st statements

	// Lease-row mode. One row per key; rows are never deleted, so the token
	// counter survives release and expiry. A free row has owner NULL.
	//
	// Acquire: the upsert inserts the row or takes over a free or expired
	// one (judged by the server's clock) and mints token+1. When it did
	// nothing the key is held: the second branch of the UNION reports the
	// holder, still in the same statement and round trip.
	st.leaseAcquire = r.Replace(`WITH ins AS (
  INSERT INTO {T} AS l (key, owner, label, token, expires_at)
  VALUES ($1::text, $2::text, $3::text, 1, clock_timestamp() + $4{US})
  ON CONFLICT (key) DO UPDATE
    SET owner = excluded.owner, label = excluded.label, token = l.token + 1, expires_at = excluded.expires_at
    WHERE l.owner IS NULL OR l.expires_at <= clock_timestamp()
  RETURNING l.token
)
SELECT true, ins.token, ''::text, 0::bigint FROM ins
UNION ALL
SELECT false, h.token, h.label, COALESCE((extract(epoch FROM h.expires_at - clock_timestamp()) * 1000000)::bigint, 0)
  FROM {T} h WHERE h.key = $1::text AND NOT EXISTS (SELECT 1 FROM ins)`)

	// The first half of the clean-up after an acquire whose answer was
	// lost: the token of the grant the owner holds, if any, waiting behind
	// a statement that holds the row lock (the lost acquire itself, still
	// running). The second half is the release of that owner and token.
	st.leaseAbandon = r.Replace(`SELECT token FROM {T} WHERE key = $1::text AND owner = $2::text FOR UPDATE`)

	st.leaseRenew = r.Replace(`UPDATE {T} SET expires_at = clock_timestamp() + $4{US}
WHERE key = $1::text AND owner = $2::text AND token = $3::bigint`)

	// Release clears the owner and, only when someone waits for the key
	// (a listening connection holds a shared lock on the key's waiter flag,
	// so the exclusive try fails), notifies in the same statement. No row:
	// not held.
	//
	// $1 key, $2 owner, $3 token, $4 $5 flag, $6 channel.
	st.leaseRelease = r.Replace(`UPDATE {T} SET owner = NULL, label = '', expires_at = NULL
WHERE key = $1::text AND owner = $2::text AND token = $3::bigint
RETURNING ` + notifyIfWaited("$4", "$5", "$6", "$1"))

	st.leaseHolder = r.Replace(`SELECT h.label, h.token, (extract(epoch FROM h.expires_at - c.now) * 1000000)::bigint
FROM {T} h, (SELECT clock_timestamp() AS now) c
WHERE h.key = $1::text AND h.owner IS NOT NULL AND h.expires_at > c.now`)

	st.leaseList = r.Replace(`SELECT h.key, h.label, h.token, (extract(epoch FROM h.expires_at - c.now) * 1000000)::bigint
FROM {T} h, (SELECT clock_timestamp() AS now) c
WHERE starts_with(h.key, $1::text) AND h.owner IS NOT NULL AND h.expires_at > c.now
ORDER BY h.key`)

	// Batch renewal: one statement for any number of grants.
	st.leaseRenewMany = r.Replace(`UPDATE {T} t SET expires_at = clock_timestamp() + u.ttl::float8 * interval '1 microsecond'
FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) AS u(key, owner, token, ttl)
WHERE t.key = u.key AND t.owner = u.owner AND t.token = u.token
RETURNING t.key, t.owner, t.token`)

	// Advisory mode, run on the lease's dedicated session. Acquire takes the
	// lock, and only if it got it: mints a token from the sequence, sets
	// idle_session_timeout to the TTL (the server ends a session that stops
	// renewing, and with it the lock) and publishes "lh1 <check> <token>
	// <expiry ms> <label>" as the session's application_name, which is how
	// other sessions learn the holder (Holder reads it through pg_locks and
	// pg_stat_activity). One statement, one round trip, and as light as the
	// bare lock allows: the select list is evaluated left to right, so
	// currval sees the nextval just before it.
	//
	// $1 lock id, $2 check, $3 label, $4 TTL in ms.
	st.advAcquire = r.Replace(`SELECT l.ok,
  current_setting('application_name'), current_setting('idle_session_timeout'),
  CASE WHEN l.ok THEN nextval({SEQ}::regclass) ELSE 0 END,
  CASE WHEN l.ok THEN set_config('application_name', left('lh1 ' || $2::text || ' ' || currval({SEQ}::regclass) || ' ' || ({NOWMS} + $4::bigint) || ' ' || $3::text, 63), false) END IS NOT NULL,
  CASE WHEN l.ok THEN set_config('idle_session_timeout', $4::bigint::text, false) END IS NOT NULL
FROM (SELECT pg_try_advisory_lock($1::bigint) AS ok OFFSET 0) l`)

	// $1 classid, $2 objid, $3 check, $4 token, $5 label, $6 TTL in ms.
	st.advRenew = `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_locks l WHERE l.locktype = 'advisory' AND l.pid = pg_backend_pid()
    AND l.classid::bigint = $1::bigint AND l.objid::bigint = $2::bigint AND l.objsubid = 1 AND l.granted),
  set_config('application_name', left('lh1 ' || $3::text || ' ' || $4::bigint || ' ' || (` + nowMS + ` + $6::bigint) || ' ' || $5::text, 63), false) IS NOT NULL,
  set_config('idle_session_timeout', $6::bigint::text, false) IS NOT NULL`

	// $1 lock id, $2 previous application_name, $3 previous
	// idle_session_timeout, $4 $5 flag, $6 channel, $7 key.
	st.advRelease = `SELECT pg_advisory_unlock($1::bigint),
  set_config('application_name', $2::text, false) IS NOT NULL,
  set_config('idle_session_timeout', $3::text, false) IS NOT NULL,
  ` + notifyIfWaited("$4", "$5", "$6", "$7")

	st.advHolder = `SELECT x.app IS NOT NULL, COALESCE(x.app, ''), ` + nowMS + `
FROM (SELECT ` + advisoryHolderApp("$1::bigint", "$2::bigint") + ` AS app) x`
	return st
}

// quoteLiteral quotes a string literal in the escape form (E'...'), which
// means the same whatever standard_conforming_strings is.
func quoteLiteral(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `'`, `''`)
	return `E'` + s + `'`
}
