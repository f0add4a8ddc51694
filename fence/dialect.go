package fence

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Dialect is the SQL flavour a [Table] writes: how it numbers placeholders
// and quotes identifiers. The zero value is [Postgres].
type Dialect int

const (
	// Postgres numbers placeholders $1, $2, ... and quotes identifiers with
	// double quotes. It is the zero value. It suits PostgreSQL (through
	// database/sql with pgx's stdlib or lib/pq, or pgx itself through an
	// [ExecFunc]) and CockroachDB.
	Postgres Dialect = iota
	// SQLite uses ? placeholders and double-quoted identifiers.
	SQLite
	// MySQL uses ? placeholders and backquoted identifiers. It suits MySQL
	// and MariaDB. MySQL counts only the rows an UPDATE changed, so a write
	// whose token equals the stored one would look fenced out: open the
	// connection with the client-found-rows flag (clientFoundRows=true in
	// the DSN of github.com/go-sql-driver/mysql).
	MySQL
)

// String returns the dialect's name.
func (d Dialect) String() string {
	switch d {
	case Postgres:
		return "Postgres"
	case SQLite:
		return "SQLite"
	case MySQL:
		return "MySQL"
	default:
		return "Dialect(" + strconv.Itoa(int(d)) + ")"
	}
}

// valid reports an unknown dialect.
func (d Dialect) valid() error {
	if d < Postgres || d > MySQL {
		return fmt.Errorf("fence: unknown SQL dialect %d", int(d))
	}
	return nil
}

// Placeholder returns the text of the n-th (1-based) placeholder: $n for
// [Postgres], ? otherwise. It is for callers that write their own fenced
// statements (for [Table.Exec]) and for packages that write other SQL in
// the same dialect.
func (d Dialect) Placeholder(n int) string { return d.placeholder(n) }

// QuoteIdent validates a plain SQL identifier (a letter or underscore, then
// letters, digits or underscores, at most 63 bytes) and quotes it for the
// dialect. The error wraps [ErrInvalidIdentifier].
func (d Dialect) QuoteIdent(name string) (string, error) {
	if err := d.valid(); err != nil {
		return "", err
	}
	return d.quote("identifier", name)
}

// QuoteTable validates a table name of one to three dotted parts (table,
// schema.table, catalog.schema.table) and quotes each part. The error
// wraps [ErrInvalidIdentifier].
func (d Dialect) QuoteTable(name string) (string, error) {
	if err := d.valid(); err != nil {
		return "", err
	}
	return d.quoteTable(name)
}

// placeholder returns the text of the n-th (1-based) placeholder.
func (d Dialect) placeholder(n int) string {
	if d == Postgres {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

// maxIdentifier is the longest identifier accepted: PostgreSQL truncates
// names at 63 bytes, MySQL refuses more than 64.
const maxIdentifier = 63

var identifierRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// quote validates a plain identifier and quotes it. what names it in
// errors ("table", "id column", ...).
func (d Dialect) quote(what, name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("%w: empty %s name", ErrInvalidIdentifier, what)
	}
	if len(name) > maxIdentifier || !identifierRE.MatchString(name) {
		return "", fmt.Errorf("%w: %s name %q: use a letter or underscore, then letters, digits or underscores, at most %d bytes",
			ErrInvalidIdentifier, what, truncate(name), maxIdentifier)
	}
	if d == MySQL {
		return "`" + name + "`", nil
	}
	return `"` + name + `"`, nil
}

// quoteTable validates and quotes a table name of one to three dotted parts
// (table, schema.table, catalog.schema.table).
func (d Dialect) quoteTable(name string) (string, error) {
	parts := strings.Split(name, ".")
	if len(parts) > 3 {
		return "", fmt.Errorf("%w: table name %q has more than three dotted parts", ErrInvalidIdentifier, truncate(name))
	}
	for i, p := range parts {
		q, err := d.quote("table", p)
		if err != nil {
			return "", err
		}
		parts[i] = q
	}
	return strings.Join(parts, "."), nil
}
