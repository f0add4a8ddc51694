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
// The fencing token is a counter kept in the metadata of a second blob,
// tokens/<key>, that is never leased or deleted by the store. After the
// lease acquire, the counter blob is rewritten with If-Match on the etag
// read (or If-None-Match: * when it does not exist yet), and then the
// lease blob's metadata is written with the lease id and If-Match on its
// etag. An acquire whose metadata writes fail releases the lease it took.
//
// A new token is max(lease blob's token + 1, counter + 1, the server's
// Date in µs), the Date of the reads made after the lease acquire.
// Deleting the lease blob or the counter blob (someone else's doing)
// cannot restart the count, since the other keeps the last token; deleting
// both cannot either, since the next token is at least the server's time
// in µs. The Date header is whole seconds, so deleting both can repeat a
// token only within the second of the key's last grant, or if the
// server's clock also steps back (as on the s3 store).
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
// "label" only with a token and only on a lease blob; no name twice in
// different cases), the ETag, the lease state (one of Azure's) and the
// Date header (from the year 2000 on). Anything else is refused with a
// [*leasehold.ForeignRecordError] naming the blob, inside a
// [*leasehold.StoreError], and left alone.
package azblob
