// Package storeurl opens a leasehold store named by a URL, the way the
// leasehold command's --store flag and LEASEHOLD_STORE variable name one.
//
// The scheme chooses the store:
//
//	sqlite:///abs/path.db, file:///abs/path.db   the embedded store (a local file)
//	memory://                                    a fresh in-process store (tests)
//	redis://host:port/db, rediss://... (TLS)     one Redis server (redis/goredis)
//	redlock://host1:port,host2:port,...          Redlock over N Redis masters (redis/goredis)
//	postgres://user@host/db, postgresql://...    PostgreSQL (postgres; run Migrate first)
//	etcd://host:port[,host:port...][/prefix]     etcd (etcd)
//
// Each store documents the rest of its URL (see its OpenURL function).
// DefaultURL names the embedded store in the user's state directory, which
// the leasehold command uses when no store is named.
//
// Open is a plain switch on the scheme: no registry, no init side effects.
// The price is that this module depends on every backend's module; a program
// that needs one store should import that store's package instead.
package storeurl
