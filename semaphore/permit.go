package semaphore

import (
	"context"

	"github.com/leasehold-go/leasehold"
)

// Permit is one holder's place in a semaphore: the lease on one slot. The
// embedded Lease gives its token, context, deadline and Release; its Key is
// the slot's key (SlotKey), and its Token is the slot's fencing token,
// strictly increasing per slot, not across slots.
type Permit struct {
	*leasehold.Lease
	s    *Semaphore
	sem  string
	slot int
	n    int
}

// Release releases the permit's slot (Lease.Release). Once the store has
// released it, the Semaphore that granted the permit tries this slot first
// on its next Acquire of the same key: a holder that cycles finds its slot
// again in one attempt, however many other slots are held.
func (p *Permit) Release(ctx context.Context) error {
	err := p.Lease.Release(ctx)
	if err == nil && p.s != nil {
		p.s.remember(p.sem, p.slot)
	}
	return err
}

// Slot returns the permit's slot number, in [0, N).
func (p *Permit) Slot() int { return p.slot }

// Semaphore returns the key of the semaphore the permit belongs to.
func (p *Permit) Semaphore() string { return p.sem }

// Slots returns the semaphore's number of slots, N.
func (p *Permit) Slots() int { return p.n }
