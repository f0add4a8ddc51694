package election

import (
	"context"
	"errors"
	"time"

	"github.com/leasehold-go/leasehold"
)

// State is the election as an observer sees it at one moment.
type State struct {
	// Leading reports whether someone leads; false is the explicit "no
	// leader" state.
	Leading bool
	// Label is how the leader labels itself (host:pid by default).
	Label string
	// Epoch is the leader's epoch (its lease's fencing token); 0 without
	// a leader.
	Epoch uint64
	// Err, when set, says that reading the election failed; the other
	// fields are then zero. The observer keeps trying, unless the store
	// is closed (leasehold.ErrClosed), after which the stream ends.
	Err error
}

// Observe streams the election's states: the current one first, then
// every change seen (a new epoch, or a change between a leader and none).
// Epochs on the stream only increase; a state is never repeated. The
// stream is closed when ctx ends, or after a State with an Err that wraps
// leasehold.ErrClosed.
//
// It reads the leader (the store's Holder) when the store's native watch
// (leasehold.Watcher) or release notification (leasehold.Notifier) fires,
// when the leader's lease would expire, and at least every
// Options.PollInterval. With a native watch every change is seen; without
// one, a leadership that begins and ends between two reads can be missed,
// but the stream is never more than PollInterval behind.
func (e *Election) Observe(ctx context.Context) <-chan State {
	out := make(chan State)
	go e.observe(ctx, out)
	return out
}

func (e *Election) observe(ctx context.Context, out chan<- State) {
	defer close(out)
	st := e.c.Store()
	var last State
	var top uint64 // the highest epoch sent
	first := true
	for ctx.Err() == nil {
		wake, stop, werr := e.subscribe(ctx, st)
		s, next := e.read(ctx, st)
		if werr != nil && s.Err == nil {
			s = State{Err: werr}
		}
		switch {
		case ctx.Err() != nil:
		case s.Err != nil:
			if !send(ctx, out, s) || errors.Is(s.Err, leasehold.ErrClosed) {
				stop()
				return
			}
		case first, s.Leading && s.Epoch > top, !s.Leading && last.Leading:
			// A leader is new only with a higher epoch than any seen (a
			// lagging read of an older one is skipped).
			if !send(ctx, out, s) {
				stop()
				return
			}
			first, last, top = false, s, max(top, s.Epoch)
		}
		if s.Err != nil {
			next = e.opts.PollInterval
		}
		wait(ctx, wake, next)
		stop()
	}
}

// subscribe starts the store's watch or release notification on the key,
// if it has one; its channel is nil otherwise.
func (e *Election) subscribe(ctx context.Context, st leasehold.Store) (<-chan struct{}, func(), error) {
	noop := func() {}
	if w, ok := st.(leasehold.Watcher); ok {
		ch, stop, err := w.Watch(ctx, e.key)
		if err != nil {
			return nil, noop, err
		}
		return ch, stop, nil
	}
	if n, ok := st.(leasehold.Notifier); ok {
		ch, stop, err := n.Subscribe(ctx, e.key)
		if err != nil {
			return nil, noop, err
		}
		return ch, stop, nil
	}
	return nil, noop, nil
}

// read reads the election's state and says when to read it next at the
// latest: when the leader's lease would expire, or after PollInterval.
func (e *Election) read(ctx context.Context, st leasehold.Store) (State, time.Duration) {
	h, err := st.Holder(ctx, e.key)
	switch {
	case errors.Is(err, leasehold.ErrNotHeld):
		return State{}, e.opts.PollInterval
	case err != nil:
		return State{Err: err}, e.opts.PollInterval
	}
	next := e.opts.PollInterval
	if h.Remaining > 0 && h.Remaining < next {
		next = h.Remaining + time.Millisecond
	}
	return State{Leading: true, Label: h.Label, Epoch: h.Token}, next
}

// send sends s unless ctx ends first.
func send(ctx context.Context, out chan<- State, s State) bool {
	select {
	case out <- s:
		return true
	case <-ctx.Done():
		return false
	}
}

// wait waits for wake, d, or ctx.
func wait(ctx context.Context, wake <-chan struct{}, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-wake:
	case <-t.C:
	case <-ctx.Done():
	}
}
