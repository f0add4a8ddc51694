// Package wire holds the JSON bodies of leasehold's HTTP API (/v1/), shared
// by the server (package serve) and its client (package remote), and the
// conversions between them and the root package's types.
//
// Durations travel as whole milliseconds: a TTL asked for is rounded up, a
// TTL granted or a time left is rounded down, so neither side ever believes
// a lease is longer than it is. Tokens travel as decimal strings, so that a
// client whose numbers are doubles (JavaScript) keeps every bit of a fence.
package wire

import (
	"time"

	"github.com/leasehold-go/leasehold"
)

// AcquireRequest is the body of POST /v1/acquire.
type AcquireRequest struct {
	Key    string `json:"key"`
	Owner  string `json:"owner"`
	Label  string `json:"label,omitempty"`
	TTLMs  int64  `json:"ttl_ms"`
	WaitMs int64  `json:"wait_ms,omitempty"`
	// Queue asks to wait in the backend's own FIFO queue
	// (Capabilities.Queue) for up to WaitMs, or, when WaitMs is 0, for as
	// long as the client's request lasts.
	Queue bool `json:"queue,omitempty"`
}

// GrantRequest is the body of POST /v1/renew and POST /v1/release: the
// grant as the acquire answered it. TTLMs is used by renew only. Handle is
// set when the backend's grants are bound to the server's process.
type GrantRequest struct {
	Key    string `json:"key"`
	Owner  string `json:"owner"`
	Token  uint64 `json:"token,string"`
	TTLMs  int64  `json:"ttl_ms,omitempty"`
	Handle string `json:"handle,omitempty"`
}

// Grant is the answer of acquire and renew.
type Grant struct {
	Key    string `json:"key"`
	Owner  string `json:"owner"`
	Label  string `json:"label,omitempty"`
	Token  uint64 `json:"token,string"`
	TTLMs  int64  `json:"ttl_ms"`
	Handle string `json:"handle,omitempty"`
}

// Holder is the answer of holder, and one entry of a list. It never holds
// the owner id.
type Holder struct {
	Key            string `json:"key"`
	Label          string `json:"label,omitempty"`
	Token          uint64 `json:"token,string"`
	RemainingMs    int64  `json:"remaining_ms"`
	MaxRemainingMs int64  `json:"max_remaining_ms,omitempty"`
}

// List is the answer of GET /v1/list.
type List struct {
	Holders []Holder `json:"holders"`
}

// FenceCheckRequest is the body of POST /v1/fence/check: is Token still
// Key's current grant?
type FenceCheckRequest struct {
	Key   string `json:"key"`
	Token uint64 `json:"token,string"`
}

// FenceCheck is the answer of POST /v1/fence/check. Current says whether
// the token asked about is the key's current grant when the store was
// read; Token is the current grant's token ("" when nobody holds the key)
// and Label its holder's label. It never holds the owner id.
type FenceCheck struct {
	Current bool   `json:"current"`
	Token   string `json:"token"`
	Label   string `json:"label,omitempty"`
}

// Info is the answer of GET /v1/info: the backend's Info and the
// capabilities the server offers over it.
type Info struct {
	Name           string       `json:"name"`
	MinTTLMs       int64        `json:"min_ttl_ms"`
	MaxTTLMs       int64        `json:"max_ttl_ms"`
	SafeTokens     bool         `json:"safe_tokens"`
	TokenCaveat    string       `json:"token_caveat,omitempty"`
	PortableGrants bool         `json:"portable_grants"`
	Capabilities   Capabilities `json:"capabilities"`
}

// Capabilities says which optional endpoints the server offers.
type Capabilities struct {
	// Notify: GET /v1/watch?mode=notify signals that a key may be free
	// (always offered: releases through the server signal it, and the
	// backend's own notifications when it has them).
	Notify bool `json:"notify"`
	// Watch: GET /v1/watch?mode=watch signals every change of a key's
	// holder (the backend has a native watch).
	Watch bool `json:"watch"`
	// List: GET /v1/list (the backend can list holders by prefix).
	List bool `json:"list"`
	// Queue: POST /v1/acquire with "queue": true waits in the backend's
	// FIFO queue (ZooKeeper's sequential nodes, etcd's revisions).
	Queue bool `json:"queue"`
	// RenewMany: POST /v1/renew-many renews several grants in one request
	// (always offered; in one round trip to the backend when it batches).
	RenewMany bool `json:"renew_many"`
	// WatchPrefix: GET /v1/watch?prefix=P signals the keys under P whose
	// holder may have changed (the backend can list holders by prefix).
	WatchPrefix bool `json:"watch_prefix"`
}

// Error is the body of every 4xx and 5xx answer.
type Error struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody names what went wrong: Code is one of the Code constants,
// Message is for people. Holder is set with CodeHeld.
type ErrorBody struct {
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Holder  *Holder `json:"holder,omitempty"`
}

// The error codes of ErrorBody.Code.
const (
	CodeBadRequest      = "bad_request"        // 400: malformed JSON, unknown field, bad query
	CodeTooLarge        = "too_large"          // 413: the body is over the limit
	CodeTimeout         = "request_timeout"    // 408: the body was not sent in time
	CodeUnauthorized    = "unauthorized"       // 401: no bearer token, or one the server does not accept
	CodeForbidden       = "forbidden"          // 403: the token may not do this verb on this key
	CodeInvalidKey      = "invalid_key"        // 400
	CodeInvalidTTL      = "invalid_ttl"        // 400
	CodeInvalidWait     = "invalid_wait"       // 400
	CodeHeld            = "held"               // 409: another owner holds the key
	CodeNotHeld         = "not_held"           // 404: the grant is not (or no longer) held; nobody holds the key
	CodeTokensExhausted = "tokens_exhausted"   // 409: the key's tokens are at their largest value
	CodeForeignRecord   = "foreign_record"     // 502: the backend holds a value that is not leasehold's
	CodeUnavailable     = "store_unavailable"  // 503: the backend failed or could not be reached
	CodeNotImplemented  = "not_implemented"    // 501: the backend lacks the capability
	CodeOverCapacity    = "over_capacity"      // 503: a cap of the server (watch streams, waiting acquires) is reached; retry later
	CodeNotFound        = "not_found"          // 404: no such route
	CodeMethod          = "method_not_allowed" // 405
)

// MsCeil returns d in whole milliseconds, rounded up.
func MsCeil(d time.Duration) int64 {
	n := int64(d / time.Millisecond) // toward zero: up for a negative d
	if d > 0 && d%time.Millisecond != 0 {
		n++
	}
	return n
}

// MsFloor returns d in whole milliseconds, rounded down (0 if negative).
func MsFloor(d time.Duration) int64 {
	if d < 0 {
		return 0
	}
	return int64(d / time.Millisecond)
}

// Ms returns n milliseconds as a Duration, saturating instead of
// overflowing.
func Ms(n int64) time.Duration {
	const limit = int64(1<<63-1) / int64(time.Millisecond)
	switch {
	case n > limit:
		return time.Duration(1<<63 - 1)
	case n < -limit:
		return -time.Duration(1<<63 - 1)
	}
	return time.Duration(n) * time.Millisecond
}

// FromHolder converts a root Holder.
func FromHolder(h leasehold.Holder) Holder {
	return Holder{Key: h.Key, Label: h.Label, Token: h.Token,
		RemainingMs: MsFloor(h.Remaining), MaxRemainingMs: MsFloor(h.MaxRemaining)}
}

// ToHolder converts to a root Holder.
func (h Holder) ToHolder() leasehold.Holder {
	return leasehold.Holder{Key: h.Key, Label: h.Label, Token: h.Token,
		Remaining: Ms(h.RemainingMs), MaxRemaining: Ms(h.MaxRemainingMs)}
}

// FromInfo converts a root Info with the server's capabilities. A minimum
// TTL is rounded up and a maximum down, so the bounds stay inside the
// backend's.
func FromInfo(i leasehold.Info, c Capabilities) Info {
	return Info{Name: i.Name, MinTTLMs: MsCeil(i.MinTTL), MaxTTLMs: MsFloor(i.MaxTTL),
		SafeTokens: i.SafeTokens, TokenCaveat: i.TokenCaveat, PortableGrants: i.PortableGrants, Capabilities: c}
}

// Refusal is how one of the root package's sentinel errors travels: the
// status and code of its answer, and whether the Store contract wraps it
// in a *leasehold.StoreError.
type Refusal struct {
	Err          error
	Status       int
	Code         string
	StoreFailure bool
}

// Refusals lists the sentinels that travel with a code of their own, in
// the order an error is matched against them (ErrHeld travels as
// CodeHeld with its holder, and is not here).
func Refusals() []Refusal {
	return []Refusal{
		{leasehold.ErrInvalidKey, 400, CodeInvalidKey, false},
		{leasehold.ErrInvalidTTL, 400, CodeInvalidTTL, false},
		{leasehold.ErrInvalidWait, 400, CodeInvalidWait, false},
		{leasehold.ErrNotHeld, 404, CodeNotHeld, false},
		{leasehold.ErrTokensExhausted, 409, CodeTokensExhausted, true},
		{leasehold.ErrForeignRecord, 502, CodeForeignRecord, true},
	}
}
