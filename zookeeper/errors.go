package zookeeper

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
	"github.com/leasehold-go/leasehold"
)

// Name is the store's name in Info and errors.
const Name = "zookeeper"

var (
	// ErrSessionLost reports that the ZooKeeper session of a store's TTL
	// class expired (or was presumed gone): every grant on it is lost, and
	// their Grant.Lost channels are closed.
	ErrSessionLost = errors.New("zookeeper session expired")
	// ErrForeignNode reports a node at a key's path that leasehold did not
	// create: a key's parent that is not a container node, a child whose
	// name is not one of leasehold's, or a holder's node that is not
	// ephemeral. The store never deletes or reuses it. It matches
	// leasehold.ErrForeignRecord; the error also holds a
	// *leasehold.ForeignRecordError naming the node and what is wrong.
	ErrForeignNode error = foreignNode{}
	// ErrSessionTimeout reports that the ensemble negotiated a session
	// timeout that cannot honour the TTL asked for.
	ErrSessionTimeout = errors.New("the negotiated session timeout cannot honour the TTL")
	// errUnknownOutcome: a create whose answer was lost, not found after
	// the reconnect (it was not applied).
	errUnknownOutcome = errors.New("the create's answer was lost")
)

// storeErr wraps err from a ZooKeeper call of op on path. An error caused by
// the caller's context is returned as is; ZooKeeper's own errors get a hint
// naming the usual cause.
func (s *Store) storeErr(ctx context.Context, op, path string, err error) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return cerr
	}
	var se *leasehold.StoreError
	if errors.As(err, &se) {
		return err
	}
	return &leasehold.StoreError{Store: Name, Op: op, Err: s.explain(path, err)}
}

// explain adds the path and a hint to the ZooKeeper errors a user can act on.
func (s *Store) explain(path string, err error) error {
	var hint string
	switch {
	case errors.Is(err, zk.ErrNoAuth):
		hint = "not authorized: the node's ACL refuses this client (check the chroot's ACL and the URL's user)"
	case errors.Is(err, zk.ErrAuthFailed):
		hint = "authentication failed (check the URL's user and password)"
	case errors.Is(err, zk.ErrNoServer):
		hint = fmt.Sprintf("no ZooKeeper server reachable at %s", s.hosts())
	case errors.Is(err, zk.ErrConnectionClosed):
		hint = fmt.Sprintf("the connection to %s broke before the answer", s.hosts())
	case errors.Is(err, zk.ErrSessionExpired), errors.Is(err, ErrSessionLost):
		return fmt.Errorf("%s: %w", path, ErrSessionLost)
	case errors.Is(err, zk.ErrNoChildrenForEphemerals):
		return foreignErr(path, "an ephemeral node, not a key node of leasehold's")
	case errors.Is(err, zk.ErrAPIError), err.Error() == "unknown error: -6":
		hint = "the server does not implement the request (container nodes need ZooKeeper 3.5.3 or later)"
	case errors.Is(err, zk.ErrClosing) && s.sessions.Closed():
		return fmt.Errorf("%s: %w", path, leasehold.ErrClosed)
	case errors.Is(err, zk.ErrClosing):
		// The Conn of a lost session closes while the Store lives on: the
		// session is gone, not the store (a waiting acquire retries it,
		// where a closed store's error would end the wait).
		return fmt.Errorf("%s: %w", path, ErrSessionLost)
	}
	if hint == "" {
		return fmt.Errorf("%s: %w", path, err)
	}
	return fmt.Errorf("%s: %s: %w", path, hint, err)
}

// notHeld is an ErrNotHeld for op on key, with why if not empty.
func notHeld(op, key, why string) error {
	if why != "" {
		return fmt.Errorf("%s %q: %s: %w", op, key, why, leasehold.ErrNotHeld)
	}
	return fmt.Errorf("%s %q: %w", op, key, leasehold.ErrNotHeld)
}

// foreignNode is ErrForeignNode: a kind of leasehold.ErrForeignRecord.
type foreignNode struct{}

func (foreignNode) Error() string { return "a node leasehold did not create is in the way" }

// Is reports leasehold.ErrForeignRecord.
func (foreignNode) Is(target error) bool { return target == leasehold.ErrForeignRecord }

// foreignErr is the error for the node at path that leasehold did not
// create, and why: a *leasehold.ForeignRecordError that is also an
// ErrForeignNode.
func foreignErr(path, why string) error {
	return fmt.Errorf("%w (%w)", &leasehold.ForeignRecordError{Object: path, Reason: why}, ErrForeignNode)
}

// foreign is foreignErr for op, as a *leasehold.StoreError.
func foreign(op, path, why string) error {
	return &leasehold.StoreError{Store: Name, Op: op, Err: foreignErr(path, why)}
}
