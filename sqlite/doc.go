// Package sqlite is leasehold's embedded default store: leases in a single
// SQLite file on local disk that any number of processes on one host share.
//
// # Why SQLite, and why modernc.org/sqlite
//
// A lease store needs one atomic, durable step ("claim the key if it is free
// and mint the next token") that many processes can run against each other.
// A SQLite write transaction is exactly that: SQLite serialises writers with
// file locks, so every process on the host that opens the same file sees one
// history. The driver is modernc.org/sqlite, a translation of SQLite's C
// source to Go: it needs no cgo and no C toolchain, so the package cross
// compiles, builds static binaries, and adds no system dependency. It is
// slower than the C library, which matters little next to an fsync per grant.
//
// # How tokens survive crashes
//
// The file holds one row per key ever acquired. Its token column is the last
// token minted for the key; an acquire reads it and writes token+1 together
// with the new owner, label and expiry in one write transaction (BEGIN
// IMMEDIATE). Release clears the owner but keeps the row, and rows are never
// deleted, so the counter survives release and expiry. The database runs in
// WAL mode with synchronous=FULL: a grant is returned only after its commit
// record is fsynced to the write-ahead log, so the token survives a process
// crash (SIGKILL), a crash of the whole machine and a power cut, assuming the
// disk honours fsync. A process killed mid-transaction leaves no trace: the
// uncommitted increment is rolled back and was never observed, so no token is
// ever handed out twice. Tokens are reset only if the file (or its -wal file
// after a crash) is deleted or replaced, which leasehold never does. A key
// whose token is the largest INTEGER gets no more grants
// (leasehold.ErrTokensExhausted); a row leasehold would not have written (a
// token <= 0, a lease expiring further ahead than twice MaxTTL) is refused
// with a *leasehold.ForeignRecordError naming it.
//
// # Whose clock
//
// Expiry is judged by the host's wall clock (time.Now, by default), read
// inside the write transaction, and stored as Unix nanoseconds. All processes
// on the host share that clock, so they agree on when a lease ends. A step of
// the host's wall clock (an operator's date command, an NTP step; not NTP's
// gradual slewing) moves every lease's end: a step forward shortens leases
// and may hand a key to a new owner while the old holder still believes its
// deadline is ahead, a step backward lengthens them. Tokens do not depend on
// the clock: they are strictly increasing whatever the clock does, which is
// why a fenced resource stays safe across clock steps.
//
// # Concurrency
//
// Each Store has one *sql.DB of at most four connections. Its writes
// (Acquire, Renew, RenewMany, Release) queue in the process for one writer
// slot, so they never fight each other for SQLite's lock, while Holder and
// List read beside the writer, as WAL mode allows. Every write is one BEGIN
// IMMEDIATE transaction, which takes the write lock before reading: two
// writers never both read and then fail to upgrade. Between processes the
// lock is SQLite's: busy_timeout waits for it (modernc's busy handler stops
// waiting when the caller's context ends), and SQLITE_BUSY results that
// SQLite returns without waiting are retried with jittered backoff. Only
// after Options.BusyTimeout (30 s by default) of waiting does an operation
// fail with a *leasehold.StoreError; the caller's context error is returned
// as is. A process killed while holding the lock loses it with its file
// descriptors, and its unfinished transaction is rolled back.
//
// # Semantics
//
//   - Acquire claims a key that is free, released or expired, and returns a
//     *leasehold.HeldError (with the holder's label, token and remaining
//     time) otherwise.
//   - Renew extends a lease if the owner and token still match. A lease that
//     expired but that nobody has acquired since is renewed, keeping its
//     token: no one else holds the key, and no newer token exists.
//   - Release clears the lease if the owner and token still match; the key's
//     token counter stays.
//   - The store also implements leasehold.Lister, leasehold.BatchRenewer
//     and leasehold.Notifier (see Waking waiters).
//
// # Waking waiters
//
// A waiting leasehold.Client subscribes to its key (Subscribe) and is woken
// when the key is released, in this or any other process on the host, so that a
// hand-off takes a wake-up and one acquire instead of the rest of a backoff
// pause. There is nothing to set up: next to the database file (path.db) the
// store keeps a directory path.db-wake of up to 256 empty files, one per bucket
// of keys (a hash of the key). After a release commits, the releasing Store
// opens its key's bucket file for writing and closes it; on Linux every Store
// that has subscribers holds one inotify watch on the directory (started by the
// first Subscribe, stopped by Close), which reports that close with the file's
// name, and the Store wakes, for each key of that bucket, its oldest subscriber
// (not all of them: only one can win, and every attempt is a write transaction
// the others would queue behind; the others wait for a later release or their
// backoff). A waiter for another key in the same bucket wakes too and makes one
// extra attempt, which finds its key still held.
//
// Wake-ups are hints; no guarantee depends on them. A lost one (the inotify
// queue overflowed, the directory was removed, the watch could not be created
// because fs.inotify.max_user_instances is reached) leaves the waiter to its
// backoff, as does an expiry, which nothing announces: the client retries when
// the holder's remaining time is up. On systems other than Linux a release
// wakes only the waiters of the Store that made it; waiters in other processes
// find the key by their backoff.
//
// The file grows by one small row per distinct key ever used; keys are not
// garbage collected, because deleting a row would reset its counter.
//
// Only local file systems are supported: WAL mode needs shared memory between
// the processes, which network file systems (NFS, SMB) do not provide.
package sqlite
