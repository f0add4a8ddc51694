package rwlock

import (
	"context"
	"fmt"

	"github.com/leasehold-go/leasehold"
)

// Mode is how a hold holds the lock.
type Mode uint8

// The modes. The zero Mode is invalid.
const (
	Read  Mode = 1 // shared with other readers
	Write Mode = 2 // exclusive
)

func (m Mode) String() string {
	switch m {
	case Read:
		return "read"
	case Write:
		return "write"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// Sequencer is what a holder shows a resource with each request, so the
// resource can refuse a stale holder (see Guard): the mode, the write epoch
// (the gate's token: the writer's own, or the one a reader passed the gate
// with) and the token of the hold's own lease (for a writer, the epoch).
type Sequencer struct {
	Mode  Mode
	Epoch uint64
	Token uint64
}

func (s Sequencer) String() string {
	return fmt.Sprintf("%s epoch %d token %d", s.Mode, s.Epoch, s.Token)
}

// Hold is a held read or write lock. Its context is cancelled, with a
// cause, the moment the hold ends: released, or its lease lost (refused on
// renewal, or past the holder's deadline).
type Hold struct {
	mode  Mode
	epoch uint64
	lease *leasehold.Lease // a reader slot's, or the gate's for a writer
}

// Mode returns the hold's mode.
func (h *Hold) Mode() Mode { return h.mode }

// Epoch returns the hold's write epoch.
func (h *Hold) Epoch() uint64 { return h.epoch }

// Sequencer returns what the holder shows a resource.
func (h *Hold) Sequencer() Sequencer {
	return Sequencer{Mode: h.mode, Epoch: h.epoch, Token: h.lease.Token()}
}

// Lease returns the lease the hold lives by: the reader's slot, or the
// writer's gate.
func (h *Hold) Lease() *leasehold.Lease { return h.lease }

// Context returns a context that ends when the hold does; context.Cause
// says why. It carries the lease's token (fence.TokenFrom), which for a
// reader is its slot's: use Sequencer to fence a read-write resource.
func (h *Hold) Context() context.Context { return h.lease.Context() }

// Done is Context().Done().
func (h *Hold) Done() <-chan struct{} { return h.lease.Done() }

// Err returns nil while the hold is held, then why it ended.
func (h *Hold) Err() error { return h.lease.Err() }

// Release ends the hold, as leasehold.Lease.Release does: it returns the
// *leasehold.LostError when the hold had been lost before the release.
func (h *Hold) Release(ctx context.Context) error { return h.lease.Release(ctx) }
