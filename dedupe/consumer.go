package dedupe

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leasehold-go/leasehold"
)

// Result says what [Consumer.Handle] did with an item.
type Result int

const (
	// Failed: the work was not done to success (or not marked done); the
	// error says why. Redeliver the item.
	Failed Result = iota
	// Processed: the work ran, returned nil, and the item is marked done.
	Processed
	// Duplicate: the item was already done; the work did not run.
	// Acknowledge the item.
	Duplicate
)

// String returns the result's name.
func (r Result) String() string {
	switch r {
	case Failed:
		return "failed"
	case Processed:
		return "processed"
	case Duplicate:
		return "duplicate"
	default:
		return fmt.Sprintf("Result(%d)", int(r))
	}
}

// Consumer runs each work item at most once at a time (a lease per item)
// and skips items already done (a Record). Client and Record are required;
// the zero value of the other fields is their default.
type Consumer struct {
	Client *leasehold.Client
	Record Record
	// Prefix is put before an item's id to make its lease key; "" means
	// "dedupe/".
	Prefix string
	// Lease is the TTL and wait of each item's lease. With Wait 0 (the
	// default) an item another worker is running right now fails at once
	// with an error matching leasehold.ErrHeld: redeliver it later, when
	// that worker will have marked it done or given it up. With a Wait,
	// Handle waits for that worker and then finds the item done.
	Lease leasehold.AcquireOptions
	// MarkTimeout bounds the mark after successful work, which runs even
	// if the caller's context has ended meanwhile (the work's effect is
	// made; only the mark keeps a redelivery from repeating it). 0 means
	// 5 seconds; negative is refused.
	MarkTimeout time.Duration
}

// Handle runs work for the item id unless it is already done: it checks
// the Record, takes a lease on the item, checks again (another worker may
// have finished it meanwhile), runs work with the lease's context and
// lease, marks the item done if work returned nil, and releases the lease.
//
// work should fence its writes with the lease's token (package fence) or
// mark the item in the same transaction as its writes ([Table.Mark]): the
// lease only keeps workers from running the item at the same time while
// all goes well. When work marks the item itself, Handle's own mark finds
// it marked, which is not an error; when work finds the item already done
// that way, it returns ErrDuplicate.
//
// Handle returns Duplicate when the item was done already, Processed when
// work succeeded and the item is marked, and Failed with the reason
// otherwise: an invalid id (ErrInvalidID), the lease (leasehold.ErrHeld
// when another worker has it), the Record, work's own error, or
// ErrUnmarked when work succeeded but the mark failed (the item would run
// again if redelivered). A lease lost while work ran is joined to the
// error as in [leasehold.Client.Do]. If work returned nil the item is
// still marked done (work reported its effect made) and Handle returns
// Processed with an error matching leasehold.ErrLost: acknowledge the
// item, and know that its work may have overlapped another worker's.
func (c *Consumer) Handle(ctx context.Context, id string, work func(ctx context.Context, l *leasehold.Lease) error) (Result, error) {
	if c.Client == nil || c.Record == nil {
		return Failed, errors.New("dedupe: Consumer needs a Client and a Record")
	}
	if c.MarkTimeout < 0 {
		// The mark would fail after the work had run.
		return Failed, fmt.Errorf("dedupe: Consumer.MarkTimeout %s is negative", c.MarkTimeout)
	}
	if err := ValidateID(id); err != nil {
		return Failed, err
	}
	key := cmp.Or(c.Prefix, "dedupe/") + id
	if err := leasehold.ValidateKey(key); err != nil {
		return Failed, fmt.Errorf("%w: the lease key of %q: %w", ErrInvalidID, id, err)
	}
	if seen, err := c.Record.Seen(ctx, id); err != nil || seen {
		return result(seen, err)
	}
	res := Failed
	err := c.Client.Do(ctx, key, c.Lease, func(lctx context.Context, l *leasehold.Lease) error {
		seen, err := c.Record.Seen(lctx, id)
		if err != nil || seen {
			res, err = result(seen, err)
			return err
		}
		if err := work(lctx, l); errors.Is(err, ErrDuplicate) {
			res = Duplicate
			return nil
		} else if err != nil {
			return err
		}
		// The work's effect is made: mark it even if ctx or the lease
		// ended as work returned, on a detached, bounded context.
		mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cmp.Or(c.MarkTimeout, 5*time.Second))
		defer cancel()
		if _, err := c.Record.Mark(mctx, id); err != nil {
			return fmt.Errorf("%w: %q: %w", ErrUnmarked, id, err)
		}
		res = Processed
		return nil
	})
	return res, err
}

// result maps a Record lookup to Handle's answer.
func result(seen bool, err error) (Result, error) {
	if err == nil && seen {
		return Duplicate, nil
	}
	return Failed, err
}
