package storeurl

import (
	"context"
	"net/url"

	"github.com/leasehold-go/leasehold"
)

// Kind is one row of the store table: everything the project needs to know
// about a store outside the store's own package. Open, Migrate, the CLI's
// usage text, leasehold bench, the fault harness's backend list and the
// README's store table all come from, or are tested against, Stores.
//
// Adding a store means one package, one row here, one install script for its
// server (scripts/install) and one fault-harness backend (faults).
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
	// Memory says how leasehold bench --scale measures the memory that
	// holds the store's leases.
	Memory Memory
	// FaultBackends are the names of the fault harness's backends that
	// run this store (faults' BackendNames); empty for a store that lives
	// in one process and so cannot be shared by the harness's holders.
	FaultBackends []string
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
// returns a new slice.
//
// Long function: one literal row per store; splitting the table would hide
// the order users see.
func Stores() []Kind {
	return append([]Kind{
		{
			Name: "sqlite", Title: "embedded (default)", Schemes: []string{"sqlite", "file"},
			Package: "sqlite",
			URLs:    []string{"sqlite:///path.db", "file:///path.db"},
			Usage: "sqlite:///abs/path.db   file:///abs/path.db   sqlite:relative/path.db\n" +
				"                        the embedded store: one file that processes on this host share",
			CheckURL: checkSQLite, Open: openSQLite, Migrate: migrateSQLite, Memory: MemoryProcess,
			FaultBackends: []string{"sqlite"},
			Token:         "per-key counter, same durable transaction as the grant",
			Notes:         "the default; many processes on one host; on Linux a release wakes their waiters",
		},
		{
			Name: "memory", Title: "memory", Schemes: []string{"memory"},
			Package:  "memory",
			URLs:     []string{"memory://"},
			Usage:    "memory://               an empty in-process store (lives as long as one leasehold command)",
			CheckURL: checkMemory, Open: openMemory, Memory: MemoryHeap,
			Token: "per-key counter",
			Notes: "in-process, tests and examples",
		},
		{
			Name: "redis", Title: "Redis", Schemes: []string{"redis", "rediss"},
			Package: "redis", Adapters: []string{"redis/goredis", "redis/rueidis"},
			URLs:     []string{"redis://host:port/db"},
			Usage:    "redis://host:port/db    (rediss:// for TLS)",
			CheckURL: checkRedis, Open: openRedis,
			FaultBackends: []string{"redis"},
			Token:         "counter in the acquire script, floored by the server's `TIME` so a restart without persistence cannot reuse a token",
			Notes:         "see redis/README.md",
		},
		{
			Name: "redlock", Title: "Redlock", Schemes: []string{"redlock"},
			Package: "redis/redlock", Adapters: []string{"redis/goredis", "redis/rueidis"},
			URLs:     []string{"redlock://h1:p1,h2:p2,h3:p3"},
			Usage:    "redlock://host1:port,host2:port,...",
			CheckURL: checkRedlock, Open: openRedlock,
			FaultBackends: []string{"redlock"},
			Token:         "**not a safe fence** (`Info().SafeTokens == false`)",
			Notes:         "quorum of independent masters",
		},
		{
			Name: "postgres", Title: "PostgreSQL", Schemes: []string{"postgres", "postgresql"},
			Package:  "postgres",
			URLs:     []string{"postgres://...", "postgres://...?mode=advisory"},
			Usage:    "postgres://user@host/db (also postgresql://; ?mode=advisory for advisory locks)",
			CheckURL: checkPostgres, Open: openPostgres, Migrate: migratePostgres,
			FaultBackends: []string{"postgres-lease", "postgres-advisory"},
			Token:         "row counter / sequence in the acquire statement",
			Notes:         "lease rows work behind PgBouncer; advisory mode needs a session connection",
		},
		{
			Name: "etcd", Title: "etcd", Schemes: []string{"etcd"},
			Package:  "etcd",
			URLs:     []string{"etcd://h1:p1,h2:p2"},
			Usage:    "etcd://host:port[,host:port...][/prefix]",
			CheckURL: checkEtcd, Open: openEtcd,
			FaultBackends: []string{"etcd"},
			Token:         "the key's create revision",
			Notes:         "one keepalive per session",
		},
	}, cloudStores()...)
}

// cloudStores are the rows after etcd: the other consensus stores, then the
// stores on object storage services.
func cloudStores() []Kind {
	return []Kind{
		{
			Name: "consul", Title: "Consul", Schemes: []string{"consul"},
			Package: "consul",
			URLs:    []string{"consul://host:port/prefix?token=..."},
			Usage: "consul://host:port[/prefix][?token=T]\n" +
				"                        one agent (usually the local one); the token defaults to $CONSUL_HTTP_TOKEN",
			CheckURL: checkConsul, Open: openConsul,
			FaultBackends: []string{"consul"},
			Token:         "the entry's ModifyIndex at the lock (a Raft index)",
			Notes:         "one session per TTL class; TTLs under Consul's 10 s session minimum ride a 10 s session",
		},
		{
			Name: "zookeeper", Title: "ZooKeeper", Schemes: []string{"zk", "zookeeper"},
			Package:  "zookeeper",
			URLs:     []string{"zk://h1:p1,h2:p2/chroot"},
			Usage:    "zk://[user:pw@]host:port[,host:port...][/chroot] (also zookeeper://)",
			CheckURL: checkZooKeeper, Open: openZooKeeper,
			FaultBackends: []string{"zookeeper"},
			Token:         "the holder node's creation zxid (Czxid)",
			Notes:         "ZooKeeper 3.5.3+; one session per TTL class; TTL from the minimum session timeout to half the maximum; grants live in the acquiring process's session",
		},
		{
			Name: "azblob", Title: "Azure Blob", Schemes: []string{"azblob"},
			Package: "azblob",
			URLs:    []string{"azblob://account/container"},
			Usage: "azblob://account/container[?endpoint=URL&auth=connstr|key|sas|default]\n" +
				"                        one blob per key; `leasehold migrate` creates the container",
			CheckURL: checkAzblob, Open: openAzblob, Migrate: migrateAzblob,
			FaultBackends: []string{"azblob"},
			Token:         "max(counter + 1, the server's Date in µs), the counter in a never-leased counter blob's metadata bumped under If-Match after the lease acquire",
			Notes:         "TTL 15-60 s (Azure's lease range; others refused); Azure's clock ends a lease",
		},
		{
			Name: "s3", Title: "S3", Schemes: []string{"s3"},
			Package: "s3",
			URLs:    []string{"s3://bucket/prefix?endpoint=URL&region=R"},
			Usage: "s3://bucket[/prefix][?endpoint=URL&region=R&access_key=K&secret_key=S]\n" +
				"                        one object per key (credentials also from AWS_ACCESS_KEY_ID...); `leasehold migrate` creates the bucket",
			CheckURL: checkS3, Open: openS3, Migrate: migrateS3,
			FaultBackends: []string{"s3"},
			Token:         "max(counter + 1, the server's Date in µs), the counter in a never-deleted counter object raised under If-Match before the lease's conditional write",
			Notes:         "conditional writes (If-None-Match, If-Match); the server's clock (Last-Modified, Date) ends a lease; a server that ignores the conditions is refused at open",
		},
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

// Schemes returns the URL schemes Open accepts, in the order shown to users.
func Schemes() []string {
	var out []string
	for _, k := range Stores() {
		out = append(out, k.Schemes...)
	}
	return out
}
