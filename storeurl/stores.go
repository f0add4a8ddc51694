package storeurl

import (
	"context"
	"log/slog"
	"net/url"

	"github.com/leasehold-go/leasehold"
)

// Kind is one row of the store table: everything the project needs to know
// about a store outside the store's own package. Open, Migrate, the CLI's
// usage text, leasehold bench, the fault harness's backend list and the
// README's store table all come from, or are tested against, Stores.
//
// Adding a store means five places: its package (its own module when it
// pulls a client library), its row (a <store>Row function in
// storeurl/<store>.go, listed in Stores), an install script per server
// (scripts/install/<server>.sh), a launcher per server
// (internal/testserver/<server>.go) and its fault backend
// (faults/harness/backend_<store>.go, made by harness.NewBackend); plus
// its line in scripts/bench-page, which lists the stores it measures by
// hand, to be measured. The tests of this package (TestStorePlaces) fail
// when one is missing.
type Kind struct {
	// Name is the store's Info().Name; Title is how the docs call it.
	Name, Title string
	// Schemes are the URL schemes that name it.
	Schemes []string
	// Package is the import path of the store's package, relative to the
	// repository's module path; Adapters are the packages that plug a
	// client library into it.
	Package  string
	Adapters []string
	// URLs are example URLs, for the README.
	URLs []string
	// Usage is the store's line in the CLI's usage text: a URL pattern,
	// padded to a column, and what it names.
	Usage string
	// CheckURL reports what is wrong with rawURL, whose scheme is one of
	// Schemes, without contacting anything: the store's own parser, so that
	// a bad URL is told from a store that cannot be reached (Open wraps its
	// error in ErrBadURL). nil when Open can use the URL.
	CheckURL func(rawURL string) error
	// Open opens the store named by rawURL, whose parsed form is u; CheckURL
	// has passed. On error it returns a nil Store, never a typed nil
	// pointer in a non-nil interface (Open returns nil on error anyway).
	Open func(ctx context.Context, rawURL string, u *url.URL) (leasehold.Store, error)
	// Migrate creates or upgrades the store's schema; nil when it keeps
	// none (Migrate reports ErrNoMigration).
	Migrate func(ctx context.Context, rawURL string) error
	// LogTo sends the log lines that the store's client library writes to
	// a process-wide logger of its own to l, or drops them when l is nil;
	// nil when the library writes none. See RouteClientLogs.
	LogTo func(l *slog.Logger)
	// Memory says how leasehold bench --scale measures the memory that
	// holds the store's leases.
	Memory Memory
	// FaultBackends are the names of the fault harness's backends that
	// run this store (faults' BackendNames); empty for a store that lives
	// in one process and so cannot be shared by the harness's holders.
	FaultBackends []string
	// FaultsOnlyNamed, when not empty, says why the fault suite runs this
	// store's backends only when its -stores flag names them.
	FaultsOnlyNamed string
	// Servers are the servers the store's tests and fault backends start:
	// each has an install script, scripts/install/<server>.sh, and a
	// launcher, internal/testserver/<server>.go. Empty for a store that
	// needs none.
	Servers []string
	// BuildTag is the build tag that leaves the store, and its client
	// library, out of a binary (go build -tags leasehold_no_azblob); empty
	// for a store that is always built in.
	BuildTag string
	// LeftOut: this binary was built with BuildTag, so the row names the
	// store but cannot open it: Open and Migrate report ErrLeftOut.
	LeftOut bool
	// Token and Notes are the store's README row: where its fencing token
	// comes from, and what else a user should know first.
	Token, Notes string
}

// Memory is how a store's lease memory is measured.
type Memory int

const (
	// MemoryServer: the store's server processes, named by their process
	// ids (leasehold bench --mem-pid).
	MemoryServer Memory = iota
	// MemoryHeap: this process's Go heap (a store that lives in it).
	MemoryHeap
	// MemoryProcess: this process's proportional set size (a store whose
	// engine runs in the process but outside the Go heap, such as SQLite's
	// page cache).
	MemoryProcess
)

// Stores returns the store table, in the order shown to users. Each call
// returns a new slice. Each row is written in its store's file
// (storeurl/<store>.go); this list only puts them in order.
func Stores() []Kind {
	return []Kind{
		sqliteRow(), memoryRow(), redisRow(), redlockRow(), postgresRow(),
		etcdRow(), consulRow(), zookeeperRow(), azblobRow(), s3Row(), dynamodbRow(), kubeRow(),
		remoteRow(),
	}
}

// RouteClientLogs sends the log lines that the stores' client libraries
// write to their process-wide loggers (go-redis's, for one) to l, or drops
// them when l is nil: a store's error already says what failed. It sets
// process-wide state, so only a program's main should call it. A store
// this binary was built without is left alone.
func RouteClientLogs(l *slog.Logger) {
	for _, k := range Stores() {
		if k.LogTo != nil {
			k.LogTo(l)
		}
	}
}

// Lookup returns the row whose Schemes include scheme.
func Lookup(scheme string) (Kind, bool) {
	for _, k := range Stores() {
		for _, s := range k.Schemes {
			if s == scheme {
				return k, true
			}
		}
	}
	return Kind{}, false
}

// Schemes returns the URL schemes Open accepts, in the order shown to users
// (not those of a store this binary was built without).
func Schemes() []string {
	var out []string
	for _, k := range Stores() {
		if !k.LeftOut {
			out = append(out, k.Schemes...)
		}
	}
	return out
}
