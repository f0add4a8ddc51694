package gocron

import (
	"context"
	"errors"
	"fmt"
	"sync"

	gocronv2 "github.com/go-co-op/gocron/v2"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/election"
)

// Elector is a gocron.Elector over a leasehold election: it campaigns in
// the background from NewElector until Close, and IsLeader answers nil
// while this process leads. Its methods are safe for concurrent use.
type Elector struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu   sync.Mutex
	lead *election.Leadership // nil while not leading
	err  error                // why the campaign loop stopped, once it has
}

var _ gocronv2.Elector = (*Elector)(nil)

// NewElector starts campaigning on key through c (see election.New for
// opts) and returns the Elector; Close stops it.
func NewElector(c *leasehold.Client, key string, opts *election.Options) (*Elector, error) {
	e, err := election.New(c, key, opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	el := &Elector{cancel: cancel, done: make(chan struct{})}
	go el.run(ctx, e)
	return el, nil
}

// run is the campaign loop: it records the leadership while it lasts.
func (el *Elector) run(ctx context.Context, e *election.Election) {
	defer close(el.done)
	err := e.Run(ctx, func(lctx context.Context, l *election.Leadership) error {
		el.set(l)
		<-lctx.Done()
		el.set(nil)
		return nil
	})
	el.mu.Lock()
	el.lead, el.err = nil, err
	el.mu.Unlock()
}

func (el *Elector) set(l *election.Leadership) {
	el.mu.Lock()
	el.lead = l
	el.mu.Unlock()
}

// Leadership returns the current leadership (its Epoch is a fencing
// token), or nil while this process does not lead.
func (el *Elector) Leadership() *election.Leadership {
	el.mu.Lock()
	defer el.mu.Unlock()
	if el.lead != nil && el.lead.Err() != nil {
		return nil
	}
	return el.lead
}

// IsLeader implements gocron.Elector: nil while this process leads, else
// an error wrapping election.ErrNotLeader.
func (el *Elector) IsLeader(context.Context) error {
	if el.Leadership() != nil {
		return nil
	}
	el.mu.Lock()
	defer el.mu.Unlock()
	if el.err != nil && !errors.Is(el.err, context.Canceled) {
		return fmt.Errorf("%w: campaigning stopped: %w", election.ErrNotLeader, el.err)
	}
	return election.ErrNotLeader
}

// Guard wraps job for a scheduler run with the Elector: the job runs with
// a context that also ends, with the *leasehold.LostError as cause, when
// the leadership is lost, and carries the leadership's lease (LeaseFrom)
// and epoch (fence.TokenFrom). Without a leadership it returns an error
// wrapping election.ErrNotLeader and does not run job.
func (el *Elector) Guard(job func(ctx context.Context) error) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		l := el.Leadership()
		if l == nil {
			return election.ErrNotLeader
		}
		return guarded(ctx, l.Lease(), job)
	}
}

// Close stops campaigning, resigns a leadership it holds, and waits for
// the campaign loop to return.
func (el *Elector) Close() error {
	el.cancel()
	<-el.done
	return nil
}
