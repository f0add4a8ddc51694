// Package dynamodb is a leasehold store on a DynamoDB table (AWS DynamoDB
// or a compatible server such as dynalite), through aws-sdk-go-v2, on
// single-item conditional writes only (no transactions).
//
// Each key has one item in a table you name, whose partition key is the
// string attribute "key" (MigrateURL, or `leasehold migrate`, creates the
// table). The item holds the format ("leasehold": 1), the state (held or
// free), the key's latest token, a version (random for every write) and,
// while held, the owner (a hash of the owner id), the label, the TTL and
// the holder's written deadline (its wall clock at send plus the TTL):
//
//   - acquire reads the item (a strongly consistent GetItem); if there is
//     none, it is free, or its lease has expired (below), it writes the
//     grant with a PutItem conditioned on what it read (attribute_not_exists
//     for no item, else the version read), with a new token, so that of
//     racing acquirers exactly one write lands;
//   - renew is an UpdateItem conditioned on the state, owner and token: a
//     new version, TTL and deadline;
//   - release is an UpdateItem on the same condition that marks the item
//     free and keeps it, and its token; the store never deletes an item.
//
// # Expiry
//
// Clock-free by default, as the AWS DynamoDB lock client does it: a
// waiter takes a held lease only after it has seen the same version of
// the item (the same write: every write has a new random version) for the
// item's TTL on its own monotonic clock, counted from the arrival of the
// reply to its first read of that version, and takes it with a write
// conditioned on that version. No wall clock is trusted, only that clocks
// run at about the same rate. The cost: a waiter that starts watching a
// lease that expired long ago still waits a TTL, and [Store.Holder] from a
// store that has not watched a lease for its TTL reports it held.
//
// With a skew bound (Options.MaxSkew, the URL's max_skew), a lease is
// also expired once the reader's wall clock passes the holder's written
// deadline plus the bound: a waiter takes an abandoned lease at its first
// read. It is safe only while every client's wall clock is within the
// bound of every other's. [Store.ExpiryMode] and Info().TokenCaveat say
// which mode a store uses.
//
// # Safety
//
//	| question                          | answer |
//	| --------------------------------- | ------ |
//	| whose clock ends a lease          | clock-free (default): the waiter's monotonic clock, which must see the item unchanged for the TTL; with max_skew: also the reader's wall clock against the holder's written deadline plus the bound |
//	| TTLs                              | 1 s to 24 h, kept in whole milliseconds |
//	| a dead holder's key frees         | clock-free: once a waiter has seen the holder's last write unchanged for the TTL; a waiter polling at most every TTL/3 (as the Client does) first sees it within TTL/3 of the write, so the key frees within TTL + 2 × TTL/3 of it plus an acquire (the fault harness's bound); with max_skew, also once the written deadline plus the bound has passed by the waiter's wall clock |
//	| what a paused holder can still do | nothing once another owner took its lease: renew and release are conditioned on its owner and token, which the takeover replaced; an expired lease nobody took is renewed, keeping its token |
//	| where the token lives             | in the key's item, which release marks free but never deletes |
//	| why it cannot go backwards        | a new token is max(the item's token + 1, the acquirer's wall clock in µs), written with a condition on the item as read; if someone deletes the item, the next token is the acquirer's clock, which repeats a token only if that clock is behind the last granter's by more than the time between the two grants |
//	| failed acquire                    | nothing is written unless the conditional write lands, so no token is reserved or reused; an item the store did not write is refused and left alone |
//	| token at 2^64-1                   | refused with an error wrapping [leasehold.ErrTokensExhausted]; nothing is written and nothing held |
//	| lost answers                      | a write whose answer is lost is retried by the SDK: an acquire or release retried into its own condition is recognised by its version; a renewal applies again, harmlessly |
//
// # Values read back
//
// Every item read is checked before it is used: the key, "leasehold" 1,
// the state, a token from 1 to 2^64-1 in decimal digits, a version of 16
// hex digits and, while held, an owner of 32 hex digits, ttl_ms within
// MinTTL to MaxTTL, deadline_us from 0 to 2^60 and a label of at most
// 4 KiB; a free item has none of these, and no item has any other
// attribute. Anything else is refused with a
// [*leasehold.ForeignRecordError] naming the table and the item, inside a
// [*leasehold.StoreError], and left alone: a planted item cannot hold a
// key forever, and the arithmetic on what is accepted cannot overflow.
//
// # Open
//
// [New] (and [OpenURL]) call DescribeTable and refuse a missing table,
// refused credentials, and a table whose key is not the store's
// ([ErrBadTable]). The credentials need dynamodb:DescribeTable, GetItem,
// PutItem and UpdateItem on the table (and CreateTable for MigrateURL).
//
// Tests run on dynalite (scripts/install/dynalite.sh) and, as a cross-check,
// on kumo (scripts/install/kumo.sh); a missing server fails them.
package dynamodb
