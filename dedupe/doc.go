// Package dedupe is the idempotent consumer: it remembers which work items
// are done, so that a redelivered item is recognised and skipped instead of
// being done twice.
//
// A lease is the last of three layers, not the first:
//
//  1. Make the write idempotent or fenced (package fence): a write that
//     lands twice, or late from a paused holder, changes nothing.
//  2. Make the consumer idempotent (this package): a queue that redelivers
//     an item after a timeout, a crash or a retry must not make the work
//     happen again. A [Record] keeps the ids of the items that are done.
//  3. Take a lease (package leasehold) so that the workers racing for the
//     same item right now do not waste effort on it at once.
//
// [Consumer] puts layers 2 and 3 together: [Consumer.Handle] skips an item
// that is already done, leases it so that only one worker runs it at a
// time, runs it, and marks it done.
//
// Marking done after the work leaves a gap: a worker that crashes between
// the work and the mark leaves the item unmarked, and it is done again on
// redelivery (at-least-once). To close the gap, mark the item in the same
// transaction as the work's own writes with [Table.Mark] on the *sql.Tx:
// the transaction commits both or neither, and a duplicate finds the mark
// and rolls back (exactly-once effect).
//
// Records: [Memory] (one process, tests) and a SQL table in PostgreSQL,
// SQLite or MySQL through database/sql ([Table], bound to a database by
// [Table.Record]).
package dedupe
