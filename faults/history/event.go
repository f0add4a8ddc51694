// Package history is the fault harness's record of a run: the events that
// holder processes, the protected resource and the harness append to their
// histories, the recorders that append them, and the files they are kept
// in. Every timestamp is CLOCK_MONOTONIC (Mono), which is system-wide on
// Linux, so the histories of several processes merge into one time line.
//
// The package has no process or network code: the checkers (package check)
// read histories, the harness (package harness) writes them.
package history

import "time"

// Event kinds. Holder processes record the store-level calls (seen through
// a recording wrapper around the store, so every attempt and every renewal
// the client makes is visible), the client-level lease lifecycle and the
// protected operations; the resource records what it read, wrote, admitted
// and refused; the harness records the faults.
const (
	// Store calls, recorded by the holder's wrapper: T0 call, T return.
	EvStoreAcquire = "s_acquire"
	EvStoreRenew   = "s_renew"
	EvStoreRelease = "s_release"

	// Client-level lease lifecycle, recorded by the holder.
	EvAcquired = "acquired" // Client.Acquire returned a lease (T0 call, T return)
	EvAcqFail  = "acq_fail" // Client.Acquire failed (Err)
	EvLost     = "lost"     // the lease's context ended with a *LostError: the loss signal
	EvReleased = "released" // Lease.Release returned (Err: its error)
	EvJeopardy = "jeopardy" // Options.OnJeopardy was called
	EvOp       = "op"       // a protected operation: T0 when issued (before its checkpoint), T at its end
	EvOpAbort  = "op_abort" // a checkpoint refused the next operation
	EvFWrite   = "fwrite"   // a fenced write as the holder saw it: T0 sent, T answered, Status
	EvStart    = "start"    // a holder process started (Note: its clock rate)

	// Resource, recorded by the harness's resource server.
	EvRead       = "read"     // W1 read of the counter (Val)
	EvCWrite     = "cwrite"   // W1 unfenced write of the counter (Val, Prev)
	EvAdmit      = "admit"    // W2 write admitted by the fence (Highest: the highest before it)
	EvFenced     = "fenced"   // W2 write refused as stale (Highest)
	EvBadRequest = "bad_req"  // a malformed request (Err)
	EvFault      = "fault"    // harness: a fault injected (Phase "on") or healed ("off")
	EvMark       = "mark"     // harness: a point of interest (Note)
	EvStall      = "stall"    // harness: its own 10 ms ticker was starved from T0 to T (a machine-wide stall)
	EvEndKill    = "end_kill" // harness: the holders named in Target (comma-separated) were killed at the run's end, by T
)

// Event is one line of a history. Times are CLOCK_MONOTONIC nanoseconds
// (Mono). Fields not relevant to a kind are left zero.
type Event struct {
	T     int64  `json:"t"`
	T0    int64  `json:"t0,omitempty"`
	Src   string `json:"src"` // holder id ("h2.1": slot 2, generation 1), "res" or "harness"
	Kind  string `json:"ev"`
	Key   string `json:"k,omitempty"`
	Token uint64 `json:"tok,omitempty"`
	Owner string `json:"own,omitempty"` // the grant's owner id: with Token, the grant's identity
	Req   string `json:"req,omitempty"` // request id of a protected write, shared by holder and resource

	Val     int64  `json:"val,omitempty"`
	Prev    int64  `json:"prev,omitempty"`
	Highest uint64 `json:"hi,omitempty"`
	Status  int    `json:"st,omitempty"`
	Left    int64  `json:"left,omitempty"` // holder-side lease time left, ns (holder's clock)
	Err     string `json:"err,omitempty"`

	Fault  string `json:"fault,omitempty"`  // fault class (F1..F12)
	Phase  string `json:"phase,omitempty"`  // "on" or "off"
	Target string `json:"target,omitempty"` // holder id, slot or store node
	Note   string `json:"note,omitempty"`
}

// StallThreshold is how late the harness's own 10 ms ticker must be for an
// EvStall: the machine is shared, and a stall starves holders and servers
// alike.
const StallThreshold = 100 * time.Millisecond
