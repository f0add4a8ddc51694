// Package redis is a leasehold store on Redis, over the client you already
// run: github.com/redis/go-redis/v9 through the goredis module, or
// github.com/redis/rueidis through the rueidis module. This package depends
// on neither; it drives any Client (EVALSHA, EVAL and pub/sub).
//
//	st, err := goredis.New(rdb, nil)          // rdb: your *redis.Client or *redis.ClusterClient
//	st, err := goredis.OpenURL(ctx, "redis://127.0.0.1:6379/0")
//	c, err := leasehold.New(st, nil)
//
// # What each call costs
//
// Every operation is one Lua script called by SHA (one round trip; on
// NOSCRIPT, after a restart or SCRIPT FLUSH, the source is sent once with
// EVAL). Acquire claims the key if it is free with SET-PX semantics and
// mints the token in the same step, or answers with the holder's label,
// token and remaining PTTL. Renew compares owner and token, then extends.
// Release compares owner and token, deletes, and PUBLISHes on the key's
// channel, so that waiters (Subscribe, which the leasehold.Client uses while
// waiting) wake at once instead of at their next backoff. RenewMany renews
// up to 1,000 leases per script call, the calls sent at once. List (for
// `leasehold status --prefix`) SCANs the keyspace, so it costs what a SCAN
// of the whole database costs.
//
// # Storage
//
// Under a prefix (default "leasehold:"), key k is stored as
// prefix{enc(k)}:lock, a string "<len(owner)>:<owner>:<token>:<label>"
// with the lease's TTL, and prefix{enc(k)}:token, the counter, without TTL
// (one small key per lease key ever used). enc percent-encodes '%', '{' and
// '}', so the braces are a Redis Cluster hash tag around the whole key and
// no key's names are a prefix of another's. A lease that expired is gone:
// Renew then returns ErrNotHeld even if nobody took the key since.
//
// # Tokens
//
// A token is max(counter + 1, the server's TIME in microseconds). The
// counter keeps tokens strictly increasing while the server lives, even if
// its clock steps back; the clock keeps them increasing when the counter is
// lost: a restart without persistence, an eviction, a failover to a replica
// that missed the last writes. The assumption (Info.TokenCaveat) is that the
// server's clock does not step backwards across such a loss. Tokens are
// about 1.7e15 today, exact in Lua's doubles (below 2^53) until the year
// 2255. The largest token is 2^53-1: a counter at it or above (2^64-1
// planted, say), or a server clock past 2255, refuses the grant with
// leasehold.ErrTokensExhausted and leaves nothing held. A counter holding
// anything but a number, and a lease value that leasehold would not write
// (another shape, a token out of range, no TTL or one above MaxTTL), is a
// *leasehold.ForeignRecordError naming the Redis key, never a token of 0.
//
// # Adapters
//
// An adapter module (goredis, rueidis) only adapts its client library: it
// implements Client (and Scanner, for List), a Dialer that OpenURL calls
// with the URL less leasehold's prefix option, and a per-master constructor
// for redlock.OpenURL. URL options, error wrapping and the Redlock quorum
// check at open live here and in the redlock package, once.
//
// # Deployments
//
// See README.md for the safety matrix: a single server, with or without
// persistence; a primary with replicas (Sentinel); Redis Cluster (each
// lease's keys share a slot; batch renewal is split by slot); and the
// redlock package for N independent masters.
package redis
