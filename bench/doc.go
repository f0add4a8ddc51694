// Package bench measures a leasehold store the way its users will use it:
// acquire and release cycles through a leasehold.Client with N concurrent
// clients on distinct keys or on one hot key, renewals of held leases, the
// time from a release to a waiting client's acquire, and how a store scales
// with the number of held leases and of waiters on one key.
//
// Run measures cycles; Scale measures acquire cost and memory as held leases
// grow; Herd measures wake-ups per release with W waiters on one key. Each
// returns plain results that WriteTable, WriteJSON and WriteSVG render, and
// ReadJSON reads back, so runs made at different times or on different
// machines can be drawn together.
//
// Every run releases the leases it holds before it returns, including when
// its context is cancelled: it then returns what it measured so far, marked
// Partial, together with the context's error.
//
// The package uses only the standard library and the leasehold package, so
// it can measure any store, including one that lives in another module.
package bench
