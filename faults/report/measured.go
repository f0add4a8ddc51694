package report

import "github.com/leasehold-go/leasehold/faults/check"

// measured explains the workloads and lists the faults (check.Faults).
func (p *page) measured() {
	w := p.w
	w("\n## What is measured\n\n")
	w("Holder processes (the harness binary re-executed) contend for the keys through `leasehold.Client` and, while they\n")
	w("hold a key, run protected operations on a resource served by the harness: each passes `Lease.Checkpoint`, reads\n")
	w("the counter, works (100 ms in the long runs; TTL/5, at most 200 ms, in the short ones), then writes the counter\n")
	w("back unfenced (W1) and writes a fenced register with the\n")
	w("lease's token in the `Fencing-Token` header (W2; `fence.Middleware`, admitting tokens >= the highest seen). The\n")
	w("writes are not re-checked against the lease after the work step: that is the application a pause catches between\n")
	w("its check and its write, the case fencing exists for.\n\n")
	w("- **W1** lost updates and overlapping read-modify-writes on the unfenced counter. It must show violations under\n")
	w("  pauses (the negative control); a run where it does not is invalid.\n")
	w("- **W2** stale writes admitted, from an exact scan of the resource's admission order (a write below the highest\n")
	w("  admitted token, or equal to it from another grant), and a porcupine linearizability check of the holders' view\n")
	w("  against a fenced-register model. A run whose long pauses produced no stale write attempt is invalid.\n")
	w("- **W3** tokens that went backwards in real-time order or were given to two grants, over every grant the store made.\n")
	w("- **W4** operations issued after the holder's own loss signal (its lease context ended), or after its holder-side\n")
	w("  deadline computed from its last successful acquire or renew.\n")
	w("- **Concurrent holders**: a lease a client accepted while another holder's lease on the key was still within\n")
	w("  its own deadline (its last successful acquire or renew, sent at t, holds until t + TTL x 0.99 - 5 ms) and\n")
	w("  was neither released nor killed. A correct store never grants a key before the previous grant's TTL has\n")
	w("  passed by its clock, so each one is the lease itself failing to exclude, attributed to the fault it fell in;\n")
	w("  only the fence keeps the resource safe then. Not a target (a figure users need to pick a store), except\n")
	w("  under F5c: a clean-up that reaches the store late must never clear a later grant, so there it must be 0.\n")
	w("- **Lease history**: every grant, renewal and release the store made (as each holder's recording wrapper saw it,\n")
	w("  with its call and return times), checked with porcupine against a register per key: a grant must linearize where\n")
	w("  no other grant is live, with a token above every earlier one; a renewal needs its grant still live; a grant is live\n")
	w("  until a release of it or its expiry bound, the call of its last successful acquire or renew + TTL x 0.99 - 5 ms\n")
	w("  (the holder's own deadline on a true clock: a store whose clock runs at least 0.99 as fast as the true one never\n")
	w("  expires a lease before it). Outcomes the holder never learned (a lost reply, a reset, calls in flight when it was\n")
	w("  killed) may or may not have happened (porcupine operations with an open end); refusals prove nothing (a store may\n")
	w("  keep a lease longer) and are left out. It catches overlapping grants whether or not a write landed in the overlap.\n")
	w("  porcupine is exponential in the worst case, so each key gets %s; a key that runs out is reported as timed out,\n", check.LeaseKeyTimeout)
	w("  never as Ok. A run without a linearization is a missed target, unless the concurrent holders above are the same\n")
	w("  overlaps (then it is judged as they are).\n")
	w("- **W5** time from a holder's SIGKILL to the store's next grant of its keys to another holder, as a ratio of the\n")
	w("  TTL, against the store's documented bound; keys without progress after the faults healed, or that a fresh\n")
	w("  client could not acquire within the bound after every holder was killed.\n")
	w("- **Mutation**: a run with the resource's fence check disabled; the checkers must report stale writes every time.\n")
	w("- **W7** `fence.Middleware` under writers that stall between admission and write (its own table above): writes\n")
	w("  that landed with a token below a write already landed on the key, with the default options (target 0) and with\n")
	w("  `UnsafeConcurrent` (the negative control, which must land some; a run where it does not is invalid).\n\n")
	w("Faults:\n\n")
	for _, c := range check.Faults {
		w("- **%s** %s.\n", c.ID, c.Description)
	}
	w("\nNetwork faults go through a TCP proxy the harness runs between each holder and each store server; for the\n")
	w("embedded store, which has no network, F6 blocks the holder's store calls inside the holder process instead.\n")
}
