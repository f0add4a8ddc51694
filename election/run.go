package election

import (
	"context"
	"math/rand/v2"
	"time"
)

// Run is the leader loop. It campaigns; when this process leads, it calls
// lead with the leadership and a context that ends when the leadership or
// ctx ends; when lead returns, it resigns. After a leadership that ended by
// loss, or a lead that returned nil, it waits a random delay up to
// Options.Backoff and campaigns again. It returns when ctx ends (ctx's error), when lead returns
// an error while still leading (that error, after resigning), or when
// campaigning fails for another reason than ctx (the store's error).
func (e *Election) Run(ctx context.Context, lead func(ctx context.Context, l *Leadership) error) error {
	for {
		l, err := e.Campaign(ctx)
		if err != nil {
			return err
		}
		err = l.RunIfLeader(ctx, func(lctx context.Context) error { return lead(lctx, l) })
		lost := l.Err() != nil                   // ended before lead returned
		_ = l.Resign(context.WithoutCancel(ctx)) // a loss is what the loop recovers from
		switch {
		case err != nil && !lost:
			return err
		case ctx.Err() != nil:
			return ctx.Err()
		}
		if !sleep(ctx, time.Duration(rand.Int64N(int64(e.opts.Backoff)+1))) {
			return ctx.Err()
		}
	}
}

// sleep waits d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
