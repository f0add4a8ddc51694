package postgres

import (
	"strings"
)

// The SQL both stores share. Each store builds its statements once, from its
// Options, so that identifiers are quoted in one place and pgx can cache the
// prepared statements: leaseSQL (lease_sql.go) and advisorySQL
// (advisory_sql.go).

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

// replacer fills in the placeholders of a statement's text: {T} the lease
// table, {SEQ} the token sequence (as a literal), {US} the cast of a TTL in
// microseconds to an interval, {NOWMS} the server's clock in Unix
// milliseconds.
func (n names) replacer() *strings.Replacer {
	return strings.NewReplacer("{T}", n.table, "{SEQ}", quoteLiteral(n.seq), "{US}", usInterval, "{NOWMS}", nowMS)
}

// usInterval turns a TTL parameter in microseconds into an interval.
const usInterval = "::bigint::float8 * interval '1 microsecond'"

// nowMS is the server's clock in Unix milliseconds.
const nowMS = "(date_part('epoch', clock_timestamp()) * 1000)::bigint"

// notifyIfWaited notifies channel with key as payload if anyone holds the
// key's waiter flag (hi, lo) in shared mode; it is true if it notified. Both
// stores' release statements end with it (see notify.go).
func notifyIfWaited(hi, lo, channel, key string) string {
	return `CASE WHEN pg_try_advisory_xact_lock(` + hi + `::int4, ` + lo + `::int4) THEN false
  ELSE pg_notify(` + channel + `::text, ` + key + `::text) IS NOT NULL END`
}

// quoteLiteral quotes a string literal in the escape form (E'...'), which
// means the same whatever standard_conforming_strings is.
func quoteLiteral(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `'`, `''`)
	return `E'` + s + `'`
}
