package consul

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/hashicorp/consul/api"
	"github.com/leasehold-go/leasehold"
)

// Name is the store's name in Info and errors.
const Name = "consul"

// ErrSessionLost reports that the Consul session under a store's grants
// ended: invalidated by Consul (its TTL ran out, it was destroyed, its node
// left the catalog) or presumed gone because it could not be renewed for as
// long as its TTL. Every grant on it is gone; their Grant.Lost channels are
// closed.
var ErrSessionLost = errors.New("consul session lost")

// errRenewOverdue reports that the session cannot be shown to outlive a new
// grant's TTL: its renewals have been failing.
var errRenewOverdue = errors.New("consul session renewal overdue (the agent is not answering session renewals)")

// storeErr wraps err from a Consul call for op on key ("" for none). An
// error caused by the caller's context is returned as is; Consul's own
// errors get a hint naming the usual cause.
func storeErr(ctx context.Context, op, key string, err error) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return cerr
	}
	if key != "" {
		err = fmt.Errorf("key %q: %w", key, explain(err))
	} else {
		err = explain(err)
	}
	return &leasehold.StoreError{Store: Name, Op: op, Err: err}
}

// explain adds a hint to the Consul errors a user can act on.
func explain(err error) error {
	var hint string
	msg := err.Error()
	var se api.StatusError
	var ne net.Error
	var ue *url.Error
	switch {
	case isACLError(err):
		hint = "the ACL token was refused (check ?token= or CONSUL_HTTP_TOKEN, and that its policy grants key_prefix write on the store's prefix and session write on the agent's node)"
	case strings.Contains(msg, "No cluster leader"), strings.Contains(msg, "no leader"):
		hint = "the cluster has no leader (no quorum)"
	case strings.Contains(msg, "Value exceeds"), strings.Contains(msg, "Request body too large"), strings.Contains(msg, "too large"):
		hint = "the request exceeds Consul's size limit (key or label too long)"
	case errors.As(err, &se) && se.Code >= 500:
		hint = "the agent failed"
	case errors.As(err, &ne), errors.As(err, &ue):
		hint = "the agent is unreachable"
	}
	if hint == "" {
		return err
	}
	return fmt.Errorf("%s: %w", hint, err)
}

// isACLError reports Consul's refusal of the request's ACL token.
func isACLError(err error) bool {
	var se api.StatusError
	if errors.As(err, &se) && se.Code == 403 {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "Permission denied") || strings.Contains(msg, "ACL not found") ||
		strings.Contains(msg, "Unexpected response code: 403")
}

// txnError turns the errors of a transaction Consul rolled back into one
// error.
func txnError(errs api.TxnErrors) error {
	var parts []string
	for _, e := range errs {
		if e != nil && !slices.Contains(parts, e.What) {
			parts = append(parts, e.What)
		}
	}
	if len(parts) == 0 {
		return errors.New("transaction rolled back without a reason")
	}
	return errors.New(strings.Join(parts, "; "))
}

// txnSays reports whether any of errs says what.
func txnSays(errs api.TxnErrors, what string) bool {
	for _, e := range errs {
		if e != nil && strings.Contains(e.What, what) {
			return true
		}
	}
	return false
}

func notHeld(op, key, why string) error {
	if why != "" {
		return fmt.Errorf("leasehold: %s store: %s %q: %s: %w", Name, op, key, why, leasehold.ErrNotHeld)
	}
	return fmt.Errorf("leasehold: %s store: %s %q: %w", Name, op, key, leasehold.ErrNotHeld)
}

// notHeldBecause is notHeld with an error as the reason, kept in the chain
// (errors.Is finds both it, ErrDataLost for one, and leasehold.ErrNotHeld).
func notHeldBecause(op, key string, why error) error {
	return fmt.Errorf("leasehold: %s store: %s %q: %w: %w", Name, op, key, why, leasehold.ErrNotHeld)
}
