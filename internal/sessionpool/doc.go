// Package sessionpool keeps a store's server sessions, one per TTL class,
// shared by every lease of that class: the table the etcd, Consul and
// ZooKeeper stores have in common.
//
// A [Pool] maps a TTL class to its session under one mutex, which also
// guards the store's closed flag. [Pool.Use] returns the class's session
// with a reference taken: the first caller creates and sets it up, the
// others wait for its outcome, and a waiter whose creator gave up because
// the creator's own context ended tries again. A session removes itself
// with [Pool.Forget] when it is lost or torn down; until it has, a Use
// that finds it gone (its Hold fails) puts a new session in its place.
//
// [Pool.WhileOpen] runs code under the mutex unless the pool is closed, so
// that either [Pool.Close] sees what the code did (a session's goroutines
// started, a goroutine counted in a WaitGroup) or the code sees the pool
// closed.
//
// [Housekeep] is the loop of a session's housekeeping goroutine, and
// [SweepPeriod] how often the etcd and Consul sessions run it.
//
// The package talks to no server: what a session is on the server, and
// what setting it up means, is the store's.
package sessionpool
