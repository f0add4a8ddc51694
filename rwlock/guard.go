package rwlock

import (
	"errors"
	"fmt"
	"sync"

	"github.com/leasehold-go/leasehold/fence"
)

// ErrInvalidSequencer: a sequencer has no valid mode, a zero epoch, or is a
// writer's whose token is not its epoch.
var ErrInvalidSequencer = errors.New("rwlock: invalid sequencer")

// Guard is a resource's check of sequencers: the read-write counterpart
// of a fence. It refuses a writer whose epoch is below the highest epoch it
// has seen (a writer or a reader came through the gate after it), and a
// reader whose epoch is below the latest writer's (a writer came in after
// it, so its hold ended). The zero value is ready to use and its methods
// are safe for concurrent use; keep one per resource, and check and act
// under one critical section where the resource allows (as fence.Table
// does in SQL).
type Guard struct {
	// Resource names what is guarded, in the errors; may be empty.
	Resource string

	mu      sync.Mutex
	write   uint64 // the highest writer's epoch accepted
	highest uint64 // the highest epoch accepted, of either mode
}

// Check accepts s, raising the guard's epochs, or refuses it with a
// *fence.StaleError (errors.Is fence.ErrStale) or ErrInvalidSequencer.
func (g *Guard) Check(s Sequencer) error {
	if err := s.valid(); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch s.Mode {
	case Write:
		if s.Epoch < g.highest {
			return &fence.StaleError{Resource: g.name(s), Token: s.Epoch, Highest: g.highest}
		}
		g.write, g.highest = s.Epoch, s.Epoch
	default:
		if s.Epoch < g.write {
			return &fence.StaleError{Resource: g.name(s), Token: s.Epoch, Highest: g.write}
		}
		g.highest = max(g.highest, s.Epoch)
	}
	return nil
}

// Epochs returns the highest writer's epoch and the highest epoch the
// guard has accepted.
func (g *Guard) Epochs() (write, highest uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.write, g.highest
}

func (g *Guard) name(s Sequencer) string {
	if g.Resource == "" {
		return s.Mode.String() + " epoch"
	}
	return g.Resource + " (" + s.Mode.String() + " epoch)"
}

func (s Sequencer) valid() error {
	switch {
	case s.Mode != Read && s.Mode != Write:
		return fmt.Errorf("%w: mode %s", ErrInvalidSequencer, s.Mode)
	case s.Epoch == 0:
		return fmt.Errorf("%w: epoch 0", ErrInvalidSequencer)
	case s.Mode == Write && s.Token != s.Epoch:
		return fmt.Errorf("%w: a writer's token %d is not its epoch %d", ErrInvalidSequencer, s.Token, s.Epoch)
	}
	return nil
}
