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
//	POST /v1/acquire  {key, owner, label, ttl_ms, wait_ms}  200 grant, 409 held
//	POST /v1/renew    {key, owner, token, ttl_ms, handle}   200 grant, 404 not_held
//	POST /v1/release  {key, owner, token, handle}           204, 404 not_held
//	GET  /v1/holder?key=K                                   200 holder, 404 not_held
//	GET  /v1/list?prefix=P                                  200 {holders}, 501 without a Lister
//	GET  /v1/watch?key=K&mode=notify|watch                  server-sent events: ready, change
//	GET  /v1/info                                           the backend's Info and capabilities
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
// (the owner id cut out). Release and renew always need the owner id and
// the token: never the key alone.
//
// Durations are whole milliseconds (a TTL asked for rounded up, one granted
// rounded down); tokens are decimal strings.
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
// This is the first slice of issue 28: README.md next to this file says
// what works (with the commands that test it), what does not yet, and the
// next steps.
package serve
