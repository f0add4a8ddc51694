// Package sqltest holds the integration tests of the SQL helpers (the
// Table types of packages fence and dedupe) against real databases:
// SQLite (modernc.org/sqlite, pure Go), and throwaway PostgreSQL and
// MariaDB servers (the MySQL dialect) that the tests start on loopback
// ports. It is a separate module so that the leasehold module does
// not depend on database drivers. It has no API.
package sqltest
