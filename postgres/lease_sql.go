package postgres

// leaseStatements holds the SQL of a LeaseStore. One row per key; rows are
// never deleted, so the token counter survives release and expiry. A free
// row has owner NULL.
type leaseStatements struct {
	acquire, abandon, renew, release, holder, list, renewMany, row string
}

func leaseSQL(n names) leaseStatements {
	r := n.replacer()
	return leaseStatements{
		// The upsert inserts the row or takes over a free or expired one
		// (judged by the server's clock) and mints token+1. When it
		// returns no row the key is held, and Acquire reads the holder
		// with holder, a second statement on that path only: a
		// data-modifying CTE that also reports the holder in the same
		// statement cost the server about 20 µs more per uncontended
		// cycle at 64 goroutines (bench's BenchmarkLeaseParts64).
		//
		// $1 key, $2 owner, $3 label, $4 TTL in µs.
		acquire: r.Replace(`INSERT INTO {T} AS l (key, owner, label, token, expires_at)
VALUES ($1::text, $2::text, $3::text, 1, clock_timestamp() + $4{US})
ON CONFLICT (key) DO UPDATE
  SET owner = excluded.owner, label = excluded.label, token = l.token + 1, expires_at = excluded.expires_at
  WHERE (l.owner IS NULL OR l.expires_at <= clock_timestamp()) AND l.token > 0 AND l.token < 9223372036854775807
RETURNING l.token`),

		// Why an acquire took nothing: the key's row as it is, with the
		// time its lease has left in seconds (NULL when expires_at is;
		// float8, so that a planted 'infinity' or year 5000 reads back).
		// Held, or a row leasehold did not write, or a token at the
		// largest bigint (the upsert takes no row with a token <= 0 or at
		// the limit).
		//
		// $1 key.
		row: r.Replace(`SELECT owner IS NOT NULL, label, token, (extract(epoch FROM expires_at) - extract(epoch FROM clock_timestamp()))::float8
FROM {T} WHERE key = $1::text`),

		// The first half of the clean-up after an acquire whose answer was
		// lost: the token of the grant the owner holds, if any, waiting
		// behind a statement that holds the row lock (the lost acquire
		// itself, still running). The second half is the release of that
		// owner and token.
		abandon: r.Replace(`SELECT token FROM {T} WHERE key = $1::text AND owner = $2::text FOR UPDATE`),

		// $1 key, $2 owner, $3 token, $4 TTL in µs.
		renew: r.Replace(`UPDATE {T} SET expires_at = clock_timestamp() + $4{US}
WHERE key = $1::text AND owner = $2::text AND token = $3::bigint`),

		// Release clears the owner and, only when someone waits for the key
		// (a listening connection holds a shared lock on the key's waiter
		// flag, so the exclusive try fails), notifies in the same
		// statement. No row: not held.
		//
		// $1 key, $2 owner, $3 token, $4 $5 flag, $6 channel.
		release: r.Replace(`UPDATE {T} SET owner = NULL, label = '', expires_at = NULL
WHERE key = $1::text AND owner = $2::text AND token = $3::bigint
RETURNING ` + notifyIfWaited("$4", "$5", "$6", "$1")),

		// The time left is in seconds, float8: a planted far-off expiry
		// reads back (and is refused) rather than overflow.
		holder: r.Replace(`SELECT h.label, h.token, (extract(epoch FROM h.expires_at) - extract(epoch FROM c.now))::float8
FROM {T} h, (SELECT clock_timestamp() AS now) c
WHERE h.key = $1::text AND h.owner IS NOT NULL AND h.expires_at > c.now`),

		list: r.Replace(`SELECT h.key, h.label, h.token, (extract(epoch FROM h.expires_at) - extract(epoch FROM c.now))::float8
FROM {T} h, (SELECT clock_timestamp() AS now) c
WHERE starts_with(h.key, $1::text) AND h.owner IS NOT NULL AND h.expires_at > c.now
ORDER BY h.key`),

		// One statement for any number of grants.
		//
		// $1 keys, $2 owners, $3 tokens, $4 TTLs in µs.
		renewMany: r.Replace(`UPDATE {T} t SET expires_at = clock_timestamp() + u.ttl::float8 * interval '1 microsecond'
FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) AS u(key, owner, token, ttl)
WHERE t.key = u.key AND t.owner = u.owner AND t.token = u.token
RETURNING t.key, t.owner, t.token`),
	}
}
