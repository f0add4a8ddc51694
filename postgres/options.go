package postgres

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Mode selects how the store claims a key, and so which store New, NewDB
// and OpenURL return.
type Mode int

const (
	// LeaseRow (the default: a *LeaseStore) keeps one row per key in the
	// lease table and claims it with a single INSERT ... ON CONFLICT DO
	// UPDATE statement. Expiry is judged by the database server's clock. It
	// keeps no session state, so it works through PgBouncer in transaction
	// pooling mode.
	LeaseRow Mode = iota
	// Advisory (an *AdvisoryStore) holds a session-level
	// pg_try_advisory_lock on a dedicated connection for the lease's life.
	// It does not work through PgBouncer in transaction pooling mode.
	Advisory
)

// String returns "lease" or "advisory", the names OpenURL's mode parameter
// accepts.
func (m Mode) String() string {
	switch m {
	case LeaseRow:
		return "lease"
	case Advisory:
		return "advisory"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Defaults for Options.
const (
	// DefaultSchema is the schema of the store's objects when Options.Schema
	// is empty.
	DefaultSchema = "public"
	// DefaultTable is the lease table's name when Options.Table is empty.
	// The advisory mode's token sequence is named after it:
	// Table+"_token_seq".
	DefaultTable = "leasehold_leases"
)

// maxTableLen leaves room for the longest suffix ("_token_seq") within
// PostgreSQL's 63-byte identifiers.
const maxTableLen = 63 - len("_token_seq")

// Options configure a store. The zero value is a LeaseStore on
// "public"."leasehold_leases".
type Options struct {
	// Mode selects lease rows (the default) or advisory locks.
	Mode Mode
	// Schema holds the store's objects. Empty means "public".
	Schema string
	// Table is the lease table's name. Empty means "leasehold_leases". It is
	// quoted as an identifier, so any name is allowed, up to 53 bytes.
	Table string
	// ListenConnString, if set, is the connection string of the dedicated
	// connection that LISTENs for release notifications. Set it to a direct
	// connection to the server when the store's pool goes through PgBouncer
	// in transaction pooling mode, where LISTEN does not work. Empty means a
	// connection taken from the store's pool or *sql.DB.
	ListenConnString string
}

// resolved returns o with defaults filled in, or an error naming what is
// wrong.
func (o Options) resolved() (Options, error) {
	if o.Schema == "" {
		o.Schema = DefaultSchema
	}
	if o.Table == "" {
		o.Table = DefaultTable
	}
	if o.Mode != LeaseRow && o.Mode != Advisory {
		return o, fmt.Errorf("postgres: unknown mode %d (want LeaseRow or Advisory)", int(o.Mode))
	}
	if err := checkIdent("schema", o.Schema, 63); err != nil {
		return o, err
	}
	if err := checkIdent("table", o.Table, maxTableLen); err != nil {
		return o, err
	}
	return o, nil
}

func checkIdent(what, name string, max int) error {
	switch {
	case len(name) > max:
		return fmt.Errorf("postgres: %s name %q is %d bytes, longer than %d", what, name, len(name), max)
	case !utf8.ValidString(name):
		return fmt.Errorf("postgres: %s name %q is not valid UTF-8", what, name)
	case strings.ContainsRune(name, 0):
		return fmt.Errorf("postgres: %s name %q holds a NUL byte", what, name)
	}
	return nil
}

// quoteIdent quotes a PostgreSQL identifier: "a""b".
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
