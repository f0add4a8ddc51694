package etcd

import (
	"context"
	"errors"
	"fmt"

	"github.com/leasehold-go/leasehold"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"
)

// Name is the store's name in Info and errors.
const Name = "etcd"

// ErrSessionLost reports that the etcd lease of a session ended (expired,
// revoked, or its keepalive failed for longer than its TTL). Every grant on
// the session is gone; their Grant.Lost channels are closed.
var ErrSessionLost = errors.New("etcd session lease lost")

// errKeepaliveOverdue reports that the session's etcd lease cannot be shown to
// outlive a new grant's TTL: keepalives have been failing.
var errKeepaliveOverdue = errors.New("etcd session keepalive overdue (the cluster is not answering keepalives)")

// storeErr wraps err from an etcd call for op. An error caused by the
// caller's context is returned as is; etcd's own errors get a hint naming
// the usual cause.
func storeErr(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.Canceled || status.Code(err) == codes.DeadlineExceeded) {
		return cerr
	}
	return &leasehold.StoreError{Store: Name, Op: op, Err: explain(err)}
}

// storeErrOn is storeErr that, when the caller's deadline passed while the
// client had no working connection, says so: the error still matches
// context.DeadlineExceeded (it is the caller's), and is not a StoreError.
func (s *Store) storeErrOn(ctx context.Context, op string, err error) error {
	err = storeErr(ctx, op, err)
	if err != context.DeadlineExceeded {
		return err
	}
	if st := s.cli.ActiveConnection().GetState(); st != connectivity.Ready {
		return fmt.Errorf("leasehold: %s store: %s: no answer before the deadline; the connection to %v is %s (cluster unreachable?): %w",
			Name, op, s.cli.Endpoints(), st, err)
	}
	return err
}

// explain adds a hint to the etcd errors a user can act on.
func explain(err error) error {
	var hint string
	switch {
	case errors.Is(err, rpctypes.ErrNoLeader):
		hint = "the cluster has no leader (no quorum)"
	case errors.Is(err, rpctypes.ErrRequestTooLarge):
		hint = "the request is larger than the server's --max-request-bytes (key or label too long)"
	case errors.Is(err, rpctypes.ErrTooManyOps):
		hint = "the transaction has more operations than the server's --max-txn-ops"
	case errors.Is(err, rpctypes.ErrPermissionDenied), errors.Is(err, rpctypes.ErrAuthFailed),
		errors.Is(err, rpctypes.ErrInvalidAuthToken), errors.Is(err, rpctypes.ErrUserEmpty),
		status.Code(err) == codes.PermissionDenied, status.Code(err) == codes.Unauthenticated:
		hint = "authentication or permission failure (check the user, password and role on the store's prefix)"
	case errors.Is(err, rpctypes.ErrNoSpace):
		hint = "the cluster's space quota is exhausted (compact and defragment)"
	case status.Code(err) == codes.ResourceExhausted:
		hint = "the request exceeds a size limit (key or label too long)"
	case status.Code(err) == codes.Unavailable:
		hint = "the cluster is unreachable"
	}
	if hint == "" {
		return err
	}
	return fmt.Errorf("%s: %w", hint, err)
}

// isLeaseNotFound reports etcd's answer that a lease does not exist (expired
// or revoked).
func isLeaseNotFound(err error) bool {
	return errors.Is(err, rpctypes.ErrLeaseNotFound) || rpctypes.ErrorDesc(err) == rpctypes.ErrLeaseNotFound.Error()
}
