// Package s3 is a leasehold store on an S3 bucket (AWS S3 or an
// S3-compatible server that honours conditional writes, such as
// versitygw), through aws-sdk-go-v2.
//
// S3 has no lease and no TTL of its own. Each key has one lease object,
// PREFIX/keys/<key> (the key escaped, see below), whose JSON body holds
// the owner (a hash of the owner id), the token, the label and the TTL,
// and a token counter object, PREFIX/tokens/<key>. Every write is a
// conditional PUT:
//
//   - acquire reads the lease object; if it is absent, a tombstone, or
//     expired by the server's clock, it writes the lease with
//     If-None-Match: * (absent) or If-Match on the ETag it read, so that of
//     racing acquirers exactly one write lands. The token is max(the
//     lease object's token + 1, the server's Date in µs), under the
//     ceiling the object carries (a value the counter was raised to);
//     past it, or without one, the acquire first raises the counter
//     (If-Match on the counter's ETag, If-None-Match: * when there is
//     none) to a second's worth of µs past the new token, the
//     lease's new ceiling. A key this store released last is written at
//     once, with If-Match on the ETag its release left, without the read
//     (a write refused because the object changed falls back to the
//     read): an acquire+release cycle is then two PUTs;
//   - renew rewrites the lease with If-Match on the ETag of the grant's
//     last write (or of a read that shows the grant's owner and token);
//   - release overwrites the lease with a tombstone that keeps its token,
//     with If-Match likewise; the store never deletes a lease or counter.
//
// Every write carries a random field, so that every write has a new ETag
// even where the ETag is the body's MD5: a renewal must change the ETag a
// rival read before it, or the rival's If-Match takeover would pass.
//
// # Safety
//
//	| question                          | answer |
//	| --------------------------------- | ------ |
//	| whose clock ends a lease          | the server's: a lease ends TTL after the whole second of its last write (Last-Modified) plus one second, and an acquirer judges it by the Date header of its own read; the client's clock is never used |
//	| TTLs                              | 1 s to 24 h; the server holds a lease up to 2 s longer than its TTL (HTTP dates are whole seconds), and a server whose Date header lags its clock (versitygw: up to a second) lets the next owner in that much later still |
//	| what a paused holder can still do | nothing once its lease expired and another owner took it: renew and release are PUTs with If-Match on an ETag the takeover changed; an expired lease that nobody took is renewed, keeping its token |
//	| where the token lives             | in the lease object (also in its tombstone), with a ceiling, and in the counter object, at or above that ceiling, which an acquire raises before it writes a token past the ceiling (about once a second while the key is busy) and which the store never deletes |
//	| why it cannot go backwards        | a new token is max(lease token + 1, the server's Date in µs) while that is under the lease's ceiling, else max(lease token + 1, counter + 1, the server's Date in µs); the lease object's write is conditional on the version read, and the counter only grows (If-Match) and is at or above every token granted, so deleting the lease object (someone else's doing) cannot restart it; deleting both objects can only repeat a token within the second of the key's last grant (the clock floor; two seconds after someone deleted the lease object alone, since a token taken from the counter runs up to a second ahead), or if the server's clock also steps back |
//	| failed acquire                    | a token reserved in the counter by an acquire that lost its lease write is skipped, never reused |
//	| token at 2^64-1                   | a lease object or counter at the largest token (planted or corrupted) is refused with an error wrapping [leasehold.ErrTokensExhausted]; nothing is written and nothing held |
//
// The server's clock must not step: a forward step ends leases early, as
// on every store whose server's clock ends leases. A distributed S3
// service must keep its nodes' clocks together (AWS does).
//
// # Open
//
// [New] (and [OpenURL]) probe the server: they write, rewrite and delete
// an object under PREFIX/probe/ and refuse, with an error wrapping
// [ErrUnsafeServer], a server that ignores If-None-Match: * or If-Match on
// PUT, keeps an object's ETag across a rewrite, or does not send Date and
// Last-Modified headers. A missing bucket or refused credentials fail
// there too, naming the bucket. The store never uses a conditional DELETE
// (MinIO ignores If-Match on DELETE), so such servers are not refused for
// that. The credentials need s3:GetObject, s3:PutObject and
// s3:DeleteObject (the probe) on PREFIX, and s3:ListBucket so that a
// missing object reads as 404, not 403.
//
// # Keys
//
// A key is one object-name component: letters, digits, '_', '-' and a '.'
// that is not first are kept and every other byte is %XX, so "reports/x"
// is keys/reports%2Fx; a key whose escaped form is longer than 200 bytes
// is named "!" and the SHA-256 of the key, in hex. An object at a key's
// name that the store did not write (not its JSON, another key's) is
// refused with an error naming it, and left alone.
//
// # Values read back
//
// Every value read from the server is checked before it is used: the
// JSON body (at most 16 KiB, no unknown fields or trailing data; format
// 1, the key, a kind that belongs at that name, a token from 1, a write
// id of 16 hex digits; a lease's owner of 32 hex digits and ttl_ms within
// MinTTL to MaxTTL; no owner, label or ttl_ms on a tombstone or counter;
// a ceiling at or above the token, none on a counter),
// the ETag, Last-Modified (from the year 2000 on and at most a day after
// the server's Date) and the Date header (from 2000 on). Anything else is
// refused with a [*leasehold.ForeignRecordError] naming the object, inside
// a [*leasehold.StoreError], and left alone; so a planted lease with a
// huge ttl_ms cannot hold a key forever, and the expiry arithmetic on
// what is accepted cannot overflow.
//
// Tests run on versitygw (scripts/install/versitygw.sh); a missing
// versitygw fails them.
package s3
