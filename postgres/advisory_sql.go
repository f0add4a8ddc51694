package postgres

// advStatements holds the SQL of an AdvisoryStore. Acquire, renew and
// release run on the lease's own session; holder runs on any connection.
type advStatements struct {
	acquire, renew, release, holder string
}

func advisorySQL(n names) advStatements {
	r := n.replacer()
	return advStatements{
		// Acquire takes the lock, and only if it got it: mints a token from
		// the sequence, sets idle_session_timeout to the TTL (the server
		// ends a session that stops renewing, and with it the lock) and
		// publishes "lh1 <check> <token> <expiry ms> <label>" as the
		// session's application_name, which is how other sessions learn
		// the holder (holder reads it through pg_locks and
		// pg_stat_activity). One statement, one round trip, and as light as
		// the bare lock allows: the select list is evaluated left to right,
		// so currval sees the nextval just before it.
		//
		// $1 lock id, $2 check, $3 label, $4 TTL in ms.
		acquire: r.Replace(`SELECT l.ok,
  current_setting('application_name'), current_setting('idle_session_timeout'),
  CASE WHEN l.ok THEN nextval({SEQ}::regclass) ELSE 0 END,
  CASE WHEN l.ok THEN set_config('application_name', left('lh1 ' || $2::text || ' ' || currval({SEQ}::regclass) || ' ' || ({NOWMS} + $4::bigint) || ' ' || $3::text, 63), false) END IS NOT NULL,
  CASE WHEN l.ok THEN set_config('idle_session_timeout', $4::bigint::text, false) END IS NOT NULL
FROM (SELECT pg_try_advisory_lock($1::bigint) AS ok OFFSET 0) l`),

		// $1 classid, $2 objid, $3 check, $4 token, $5 label, $6 TTL in ms.
		renew: r.Replace(`SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_locks l WHERE l.locktype = 'advisory' AND l.pid = pg_backend_pid()
    AND l.classid::bigint = $1::bigint AND l.objid::bigint = $2::bigint AND l.objsubid = 1 AND l.granted),
  set_config('application_name', left('lh1 ' || $3::text || ' ' || $4::bigint || ' ' || ({NOWMS} + $6::bigint) || ' ' || $5::text, 63), false) IS NOT NULL,
  set_config('idle_session_timeout', $6::bigint::text, false) IS NOT NULL`),

		// $1 lock id, $2 previous application_name, $3 previous
		// idle_session_timeout, $4 $5 flag, $6 channel, $7 key.
		release: `SELECT pg_advisory_unlock($1::bigint),
  set_config('application_name', $2::text, false) IS NOT NULL,
  set_config('idle_session_timeout', $3::text, false) IS NOT NULL,
  ` + notifyIfWaited("$4", "$5", "$6", "$7"),

		// $1 classid, $2 objid.
		holder: `SELECT x.app IS NOT NULL, COALESCE(x.app, ''), ` + nowMS + `
FROM (SELECT ` + advisoryHolderApp("$1::bigint", "$2::bigint") + ` AS app) x`,
	}
}

// advisoryHolderApp finds the application_name of the session holding the
// advisory lock whose halves are the parameters classid and objid.
func advisoryHolderApp(classid, objid string) string {
	return `(SELECT a.application_name FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid
	  WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())
	    AND l.classid::bigint = ` + classid + ` AND l.objid::bigint = ` + objid + ` AND l.objsubid = 1 AND l.granted LIMIT 1)`
}
