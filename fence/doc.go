// Package fence lets a protected resource defend itself against stale lease
// holders.
//
// A lease alone does not make a write safe: a holder can pause (GC, swap, a
// stopped VM) past the end of its lease and wake up still believing it holds
// it, while a newer holder is already writing. Every grant therefore carries a
// fencing token that is strictly greater than every earlier token for its key,
// and the resource remembers the highest token it has accepted and rejects
// lower ones in the same atomic step as the write. A token equal to the
// highest is accepted: it is the current holder writing again.
//
// The package has one helper for each place a resource lives:
//
//   - In a context: [WithToken] and [TokenFrom] carry a token from the lease to
//     the code that performs the side effect.
//   - In a SQL row: [Table.Check] runs the conditional
//     UPDATE t SET fence = $tok WHERE id = $id AND fence <= $tok in the
//     caller's transaction, and [Table.Update] writes the caller's columns and
//     the fence in one statement. Zero rows affected means fenced out
//     ([ErrStale]).
//   - Over HTTP: the [Header] carries the token; [Middleware] checks it on the
//     server (400 when missing or malformed, 409 when stale) against a [Guard]
//     such as [MemoryGuard], and runs the handlers of one resource one at a
//     time so that a stale request cannot write after a newer one was
//     admitted; [RoundTripper] stamps it on outgoing requests from the
//     request's context. The middleware protects one process: a service with
//     several replicas fences in its shared database ([Table.Check] in the
//     handler's transaction, with the token from [TokenFrom]).
//   - In tests: [Register] is an in-memory fenced register that counts and
//     records accepted and rejected writes.
//
// The package uses only the standard library and does not depend on the
// leasehold package, so any lease implementation (or none) can use it.
package fence
