package harness

import (
	"context"
	"net/url"
	"path/filepath"

	"github.com/leasehold-go/leasehold/faults/check"
)

// SQLite is the embedded store: a file, no server. Its "store kill" is the
// kill of every process using the file at once.
type SQLite struct{ path string }

// Name implements Backend.
func (b *SQLite) Name() string { return "sqlite" }

// Start implements Backend.
func (b *SQLite) Start(_ context.Context, dir string) error {
	b.path = filepath.Join(dir, "leases.db")
	return nil
}

// Endpoints implements Backend: none.
func (b *SQLite) Endpoints() []string { return nil }

// URL implements Backend.
func (b *SQLite) URL([]string) string {
	return (&url.URL{Scheme: "sqlite", Path: filepath.ToSlash(b.path)}).String()
}

// LossFaults implements GrantLoser: expiries are the holders' wall
// clocks, so a holder whose wall clock is stepped forward (F17) reads a
// live lease as expired.
func (b *SQLite) LossFaults() []string { return []string{check.F17} }

// Close implements Backend.
func (b *SQLite) Close() error { return nil }
