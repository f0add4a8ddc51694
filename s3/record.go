package s3

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// The kinds of object the store writes.
const (
	kindLease    = "lease"    // a grant: owner, token, label, TTL
	kindReleased = "released" // a released grant's tombstone: its token
	kindCounter  = "counter"  // a key's token counter (tokens/<key>)
)

// format is the version of the objects' JSON; another version is refused.
const format = 1

// maxBody is the largest object the store reads: its own are a few hundred
// bytes, so a larger one is someone else's.
const maxBody = 16 << 10

// record is the JSON body of every object the store writes.
type record struct {
	Leasehold int    `json:"leasehold"` // format
	Kind      string `json:"kind"`
	Key       string `json:"key"`
	Owner     string `json:"owner,omitempty"` // SHA-256 of the owner id: the id itself stays secret
	Token     uint64 `json:"token"`
	Label     string `json:"label,omitempty"`
	TTLms     int64  `json:"ttl_ms,omitempty"`
	// Ceiling, on a lease or a tombstone, is a value the counter object
	// was raised to (it is at or above it): tokens up to it can be granted
	// without raising the counter again. 0: unknown.
	Ceiling uint64 `json:"ceiling,omitempty"`
	// Write is random for every write, so that every write has a new
	// ETag even where the ETag is the MD5 of the body: a renewal must not
	// leave the ETag a rival read before it, or the rival's If-Match
	// takeover would pass.
	Write string `json:"write"`
}

// object is what a read found: a record, or nothing (absent).
type object struct {
	rec          record
	etag         string
	lastModified time.Time
}

func ownerHash(owner string) string {
	h := sha256.Sum256([]byte("leasehold-s3-owner:" + owner))
	return hex.EncodeToString(h[:16])
}

func nonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func leaseRecord(key, owner, label string, tok uint64, ttl time.Duration) record {
	ms := int64((ttl + time.Millisecond - 1) / time.Millisecond)
	return record{Leasehold: format, Kind: kindLease, Key: key, Owner: ownerHash(owner), Token: tok, Label: label, TTLms: ms}
}

func tombstone(key string, tok uint64) record {
	return record{Leasehold: format, Kind: kindReleased, Key: key, Token: tok}
}

func counterRecord(key string, tok uint64) record {
	return record{Leasehold: format, Kind: kindCounter, Key: key, Token: tok}
}

// encode is the record's JSON; the caller has set Write (see write).
func (r record) encode() []byte {
	b, _ := json.Marshal(r)
	return b
}

// ttl is the lease's TTL.
func (o *object) ttl() time.Duration { return time.Duration(o.rec.TTLms) * time.Millisecond }

// expiry is when the lease ends by the server's clock: the whole second of
// its last write (Last-Modified) plus one second, since the write came
// within that second, plus the TTL. It is never before the write's own
// time plus the TTL.
func (o *object) expiry() time.Time {
	return o.lastModified.Truncate(time.Second).Add(time.Second + o.ttl())
}

// heldAt reports whether the object is a lease still running at the
// server's time now (a Date header: whole seconds, never ahead of the
// server's clock).
func (o *object) heldAt(now time.Time) bool {
	return o != nil && o.rec.Kind == kindLease && now.Before(o.expiry())
}

// remaining is the lease's time left at now, at most its TTL.
func (o *object) remaining(now time.Time) time.Duration {
	return min(o.ttl(), o.expiry().Sub(now))
}

// isGrant reports whether the object is the lease of owner with token.
func (o *object) isGrant(owner string, tok uint64) bool {
	return o != nil && o.rec.Kind == kindLease && o.rec.Owner == ownerHash(owner) && o.rec.Token == tok
}

// token is the object's token; 0 when absent.
func (o *object) token() uint64 {
	if o == nil {
		return 0
	}
	return o.rec.Token
}
