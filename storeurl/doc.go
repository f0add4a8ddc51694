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
//	consul://host:port[/prefix][?token=T]        Consul (consul)
//	zk://host:port[,host:port...][/chroot]       ZooKeeper (zookeeper)
//	azblob://account/container[?endpoint=...]    Azure Blob (azblob; run Migrate first)
//	s3://bucket[/prefix][?endpoint=...]          S3 conditional writes (s3; run Migrate first)
//
// Each store documents the rest of its URL (see its OpenURL function).
// DefaultURL names the embedded store in the user's state directory, which
// the leasehold command uses when no store is named.
//
// The table is a function returning a fixed list: no registry, no init side
// effects. Each row is written in its store's file (redis.go, azblob.go,
// ...). The price is that this module depends on every backend's module; a
// program that needs one store should import that store's package and call
// its OpenURL instead.
//
// # Build tags
//
// A binary that imports storeurl links every store's client library. The
// build tags leasehold_no_redis (Redis and Redlock), leasehold_no_postgres,
// leasehold_no_etcd, leasehold_no_consul, leasehold_no_zookeeper,
// leasehold_no_azblob and leasehold_no_s3 each leave one store and its
// client library out:
//
//	go build -tags leasehold_no_azblob,leasehold_no_s3 ./cmd/leasehold
//
// A left-out store's URLs are then refused with ErrLeftOut, which names the
// tag. The embedded and memory stores are always built in. The binary sizes
// are in docs/build-tags.md.
//
// # Adding a store
//
// Write its package, add its row (a <store>Row function in <store>.go,
// listed in Stores, with a <store>_leftout.go for its build tag when it
// pulls a client library), its servers' install scripts under
// scripts/install and launchers under internal/testserver, and its fault
// backend in faults/harness; TestStorePlaces checks each place against the
// table, and the README's table is generated from it.
package storeurl
