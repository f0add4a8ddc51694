// Package serve is leasehold's lock service: an http.Handler that serves a
// versioned JSON API (/v1/) over any leasehold.Store, so that programs in
// any language, and processes that should not hold the store's credentials,
// take fenced leases through it. Package remote is its Go client (a
// leasehold.Store), and `leasehold serve` runs it.
//
// # API
//
// The OpenAPI 3 document is openapi.json (served at GET /v1/openapi.json);
// a test keeps it and the handler's routes equal.
//
//	POST /v1/acquire  {key, owner, label, ttl_ms, wait_ms, queue}  200 grant, 409 held
//	POST /v1/renew    {key, owner, token, ttl_ms, handle}   200 grant, 404 not_held
//	POST /v1/renew-many {grants: [renew bodies]}            200 {results}: a grant or an error each
//	POST /v1/release  {key, owner, token, handle}           204, 404 not_held
//	GET  /v1/holder?key=K                                   200 holder, 404 not_held
//	GET  /v1/list?prefix=P                                  200 {holders}, 501 without a Lister
//	GET  /v1/watch?key=K&mode=notify|watch                  server-sent events: ready, change
//	GET  /v1/watch?prefix=P                                 ready, change {key}, resync; 501 without a Lister
//	GET  /v1/info                                           the backend's Info and capabilities
//	POST /v1/admin/break {key, token}                      200 the broken lease (admin verb; logged)
//	POST /v1/fence/check {key, token}                       200 {current, token, label}
//	GET  /metrics                                           Options.MetricsHandler (Prometheus in leasehold serve)
//
// Every refusal is a JSON body {"error": {"code", "message"}} with a 4xx or
// 5xx status: 400 for malformed JSON, unknown fields or query parameters,
// invalid keys, TTLs and waits; 401 without a bearer token the server
// accepts or a client certificate its TLS handshake verified, and 403 for
// a verb or key outside the token's or certificate's rules (when the
// server has Options.Tokens; see Tokens); 408 for a body not sent within
// Options.BodyTimeout; 413 for a body over MaxBodyBytes; 404
// not_held when a renew or release names a grant that is not held (wrong
// owner or token, expired and taken, released; the same answer for all, so
// nothing is learnt about another owner's grant); 409 held (with the
// holder, never its owner id) or tokens_exhausted; 502 foreign_record; 503
// store_unavailable when the backend failed, with the store's error text
// (the owner id cut out); 503 over_capacity (with Retry-After) for a watch
// stream past Options.MaxWatches or an acquire that would wait past
// Options.MaxWaits (10,000 each by default). Release and renew always need the owner id and
// the token: never the key alone.
//
// An acquire waits for at most wait_ms (cut to MaxWait) while the server
// retries on the backend's notifications; with queue (on a backend that
// queues waiters itself: etcd, ZooKeeper) it waits in that FIFO queue for
// wait_ms, or as long as the request lasts when wait_ms is 0. A grant made
// after the client went away is released at once. POST /v1/renew-many
// renews up to 32 grants, each checked and authorized as a renew, in one
// call to a backend that renews in batches.
// # Fence check
//
// POST /v1/fence/check (after Chubby's CheckSequencer) answers whether a
// token is still its key's current grant, from the store's holder read,
// with the current grant's token and label; it needs the read verb on the
// key. A check is a point-in-time answer, not a write guard: the lease may
// end, and another owner be granted the key, between the check and the
// write that follows it. A resource that must refuse stale writes keeps
// the highest token it has seen and refuses lower ones: fence.Table, or
// the SQL, HTTP and object-store fence helpers. Use the check for reads,
// for logs, and for resources that cannot keep a fence; on a store whose
// tokens are not safe (Info.SafeTokens false) it is no stronger than they
// are. remote.Store's CheckFence calls it.
//
// # Serving it
//
// The http.Server in front of a Server should bound headers
// (MaxHeaderBytes, ReadHeaderTimeout) and idle connections (IdleTimeout),
// and set no ReadTimeout or WriteTimeout: those would end the watch
// streams and waiting acquires, which the handler bounds itself
// (Options.BodyTimeout, StreamWriteTimeout, MaxWatches, MaxWaits, MaxWait).
// leasehold serve sets 64 KiB, 10 s and --idle-timeout (2 minutes).
//
// # Metrics
//
// Server.Metrics is a snapshot of the server's counters: requests by
// route and status, latency by route, refusals by error code, backend
// errors, acquires waiting, watch streams open, grants kept. Its labels
// are fixed sets (a route of the API or "other", a status, an error
// code): never a key, owner id, token or bearer secret. GET /metrics
// serves Options.MetricsHandler on the API's own listener, so its TLS and
// tokens apply (the read verb on some key); leasehold serve sets one that
// exports Metrics in Prometheus's text format (leasehold_serve_*).
//
// # Watch by prefix
//
// leasehold.Watcher watches one key (no store offers a prefix watch
// through it), so a watch by prefix has two
// sources: the grants and releases through this server (at once), and a
// list of the prefix every Options.PrefixPoll compared with the one
// before (changes through other replicas or directly on the store, and
// expiries, up to one period late). A change elsewhere undone within one
// period (a key taken and released between two lists) is not seen; a
// backend without a Lister is refused with 501 rather than watched
// through this server alone. Each watched prefix is listed once per
// period however many streams watch it. A stream whose client does not
// read keeps at most MaxPendingKeys changed keys (then it sends resync:
// list again) and is dropped once a write waits Options.StreamWriteTimeout.
//
// Durations are whole milliseconds (a TTL asked for rounded up, one granted
// rounded down); tokens are decimal strings.
//
// # Dashboard
//
// GET / is a live dashboard for people (not part of the /v1/ API, nor of
// openapi.json): the held leases under ?prefix= with holder label, token,
// time left, waiters and contention, kept live by the server-sent events
// of GET /dashboard/events, with a break button (POST /dashboard/break,
// as POST /v1/admin/break) where the viewer has the admin verb. With
// Options.Tokens the viewer signs in once (POST /dashboard/login) and the
// token is kept in an HttpOnly, SameSite=Strict session cookie that only
// the dashboard's paths accept; without tokens the page is read-only.
// dashboard.go says why, and README.md what it shows.
//
// # State
//
// The server keeps no lease state it cannot lose. A grant the store
// returns with state of its own (a Private: an etcd or Consul session's
// entry, a connection holding an advisory lock, the memory store's map) is
// kept under a random 128-bit handle that only the acquiring client gets
// (a grant rebuilt from its key, owner and token without the handle, as
// the CLI's one-shot renew sends it, is found by them), and renewed and
// released through that state; a kept grant whose TTL
// passed without a renewal is released, as the acquiring process of such a
// store would. When the server restarts, a grant of a store with
// PortableGrants is rebuilt from its key, owner and token on its next
// renewal; one of a store without (memory, advisory locks, ZooKeeper
// sessions) ended with the old process: its client's renewal is refused
// with not_held, so its lease is lost and its context cancelled.
//
// Replicas: a kept grant renews through the server that made it; another
// replica can renew it (rebuilt, on a portable store) only once that server
// is gone, since a session store's acquiring process ends a grant it did
// not renew itself. The remote store, given a list of servers, sends a
// kept grant's renewals to its server only, and the rest to any (see
// package remote).
//
// # Status
//
// README.md next to this file says what works (with the commands that
// test it), what is measured, and the known gaps.
package serve
