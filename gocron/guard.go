package gocron

import (
	"context"
	"errors"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/fence"
)

type leaseKey struct{}

// LeaseFrom returns the lease a guarded job runs under (see Locker.Guard
// and Elector.Guard), or nil outside one.
func LeaseFrom(ctx context.Context) *leasehold.Lease {
	l, _ := ctx.Value(leaseKey{}).(*leasehold.Lease)
	return l
}

// Guard wraps job for a gocron task run with the Locker (gocron.NewTask
// passes the job's context as its first argument): the job runs with a
// context that also ends, with the *leasehold.LostError as cause, when the
// lease its Lock took is lost, and carries the lease's token
// (fence.TokenFrom) and the lease (LeaseFrom). If the lease was lost, its
// error is joined to the job's. Without a lease for the job it returns
// ErrNoLease and does not run job.
func (l *Locker) Guard(job func(ctx context.Context) error) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		lease := l.current(ctx)
		if lease == nil {
			return ErrNoLease
		}
		return guarded(ctx, lease, job)
	}
}

// guarded runs job under lease: its context ends when ctx ends or the
// lease is lost.
func guarded(ctx context.Context, lease *leasehold.Lease, job func(ctx context.Context) error) error {
	if err := lease.Err(); err != nil {
		return err
	}
	rctx, cancel := context.WithCancelCause(context.WithValue(fence.WithToken(ctx, lease.Token()), leaseKey{}, lease))
	defer cancel(nil)
	stop := context.AfterFunc(lease.Context(), func() { cancel(context.Cause(lease.Context())) })
	defer stop()
	err := job(rctx)
	if lost := lease.Err(); errors.Is(lost, leasehold.ErrLost) {
		err = errors.Join(err, lost)
	}
	return err
}
