package sessionpool

import (
	"context"
	"errors"
	"time"
)

// OnSession runs op on the session of class with a reference taken (Use),
// dropping it after. If op fails with an error that matches gone (the
// session was lost under it), it runs op once more on a new session, and
// if that fails so too it returns lost() instead. An error of Use is
// returned as useErr(err), or as it is if useErr is nil.
func OnSession[S Session, T any](ctx context.Context, p *Pool[S], class time.Duration, op func(S) (T, error), gone error, lost, useErr func(error) error) (T, error) {
	for attempt := 0; ; attempt++ {
		ss, err := p.Use(ctx, class)
		if err != nil {
			var zero T
			if useErr != nil {
				err = useErr(err)
			}
			return zero, err
		}
		v, err := op(ss)
		ss.Drop()
		if errors.Is(err, gone) {
			if attempt == 0 {
				continue // the session was lost under op: one more try on a new one
			}
			err = lost(err)
		}
		return v, err
	}
}

// Signal wakes a channel of capacity one without blocking: a signal
// already pending stands for this one too.
func Signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
