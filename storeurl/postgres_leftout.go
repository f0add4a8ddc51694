//go:build leasehold_no_postgres

package storeurl

// postgresRow names PostgreSQL in a binary built with -tags leasehold_no_postgres:
// its URLs are refused with ErrLeftOut. The row itself is in postgres.go.
func postgresRow() Kind {
	return leftOut("postgres", "PostgreSQL", "leasehold_no_postgres", "postgres", "postgresql")
}
