package semaphore

import "github.com/leasehold-go/leasehold"

// Permit is one holder's place in a semaphore: the lease on one slot. The
// embedded Lease gives its token, context, deadline and Release; its Key is
// the slot's key (SlotKey), and its Token is the slot's fencing token,
// strictly increasing per slot, not across slots.
type Permit struct {
	*leasehold.Lease
	sem  string
	slot int
	n    int
}

// Slot returns the permit's slot number, in [0, N).
func (p *Permit) Slot() int { return p.slot }

// Semaphore returns the key of the semaphore the permit belongs to.
func (p *Permit) Semaphore() string { return p.sem }

// Slots returns the semaphore's number of slots, N.
func (p *Permit) Slots() int { return p.n }
