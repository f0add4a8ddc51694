// Package storeurl opens a leasehold store named by a URL, the way the
// leasehold command's --store flag and LEASEHOLD_STORE variable name one.
//
// The scheme chooses the store, by the store table ([Stores]): one row per
// store with its schemes, its opener, its migration, how its memory is
// measured, its fault-harness backends and its lines in the CLI's usage and
// the README. The schemes are
//
//	sqlite:///abs/path.db, file:///abs/path.db   the embedded store (a local file)
//	memory://                                    a fresh in-process store (tests)
//	redis://host:port/db, rediss://... (TLS)     one Redis server (redis/goredis)
//	redlock://host1:port,host2:port,...          Redlock over N Redis masters (redis/goredis)
//	postgres://user@host/db, postgresql://...    PostgreSQL (postgres; run Migrate first)
//	etcd://host:port[,host:port...][/prefix]     etcd (etcd)
//	zk://host:port[,host:port...][/chroot]       ZooKeeper (zookeeper)
//
// Each store documents the rest of its URL (see its OpenURL function).
// DefaultURL names the embedded store in the user's state directory, which
// the leasehold command uses when no store is named.
//
// The table is a function returning a fixed list: no registry, no init side
// effects. The price is that this module depends on every backend's module; a
// program that needs one store should import that store's package instead.
// Adding a store: write its package, add its row to Stores (the tests then
// check the README's table and the fault harness's backends against it), add
// its server's install script under scripts/install and its fault backend.
package storeurl
