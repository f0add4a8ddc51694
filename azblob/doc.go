// Package azblob is a leasehold store on Azure Blob Storage leases.
//
// Each key is one block blob, keys/<key>, in a container the user names
// (made by [Store.Migrate], never at acquire time). A lease is an Azure
// blob lease: Azure's clock ends it. The lease id is derived from the
// owner id, so a grant is portable (any process holding key and owner can
// renew or release it).
//
// TTLs: Azure leases last 15 to 60 s. A TTL below 15 s or above 60 s is
// refused with an error naming the range; a TTL is rounded up to whole
// seconds and the rounded value is the grant's TTL.
//
// # Tokens
//
// The fencing token lives in the lease blob's metadata, with a ceiling: a
// value that a counter kept in the metadata of a second blob,
// tokens/<key>, was raised to (the store never leases or deletes the
// counter blob). An acquire takes the Azure lease with If-Match on the
// ETag of a read of the lease blob, so the metadata under the lease is the
// one read; then it writes the next token (max(the lease blob's token +
// 1, the server's Date in µs)) into the metadata, under the lease id and with If-Match on that ETag.
// When that token is past the ceiling (or there is none), the acquire
// first raises the counter blob, with If-Match on the etag read (or
// If-None-Match: * when it does not exist yet), to a second's worth of µs
// past the new token: the new ceiling (so about once a second while the
// key is busy). An acquire whose token write fails releases the
// lease it took. A key this store released last is taken at once, with
// If-Match on the ETag its release left, without the read; renew and
// release use the ETag the acquire's write left, and read first only for
// a grant from elsewhere or after that ETag is refused. A cycle is then
// three requests: the lease acquire, the token write, the lease release.
//
// A token past the ceiling is max(lease blob's token + 1, counter + 1,
// the server's Date in µs). Deleting the lease blob or the counter blob
// (someone else's doing) cannot restart the count, since the other keeps
// a value at or above the last token; deleting both cannot either, since
// the next token is at least the server's time in µs. The Date header is
// whole seconds, so deleting both can repeat a token only within the
// second of the key's last grant (two seconds after someone deleted the
// lease blob alone: a token taken from the counter runs up to a second
// ahead), or if the server's clock also
// steps back (as on the s3 store).
//
// A token at 2^64-1 (planted or corrupted) is refused with an error
// wrapping [leasehold.ErrTokensExhausted], and the lease the acquire took
// is released: nothing is held, and no token wraps.
//
// # Values read back
//
// Every value read from the server is checked before it is used: the
// metadata ("leasehold" is "1"; "token" a decimal from 1 to 2^64-1 as the
// store writes it, no sign or leading zeros, required on a counter blob;
// "label" only with a token and only on a lease blob; "ceiling" a token at
// or above "token", only on a lease blob; no name twice in different
// cases), the ETag, the lease state (one of Azure's) and the
// Date header (from the year 2000 on). Anything else is refused with a
// [*leasehold.ForeignRecordError] naming the blob, inside a
// [*leasehold.StoreError], and left alone.
package azblob
