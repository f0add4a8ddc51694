package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/leasehold-go/leasehold"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	authnv1 "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authzv1 "k8s.io/client-go/kubernetes/typed/authorization/v1"
	coordv1 "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
)

// Name is the store's name in errors and Info.
const Name = "kube"

// MinTTL and MaxTTL bound the TTLs the store accepts. A Lease says its
// duration in whole seconds (leaseDurationSeconds, for other readers such
// as kubectl and client-go), so a TTL under a second is refused.
const (
	MinTTL = time.Second
	MaxTTL = leasehold.MaxTTL
)

// Options configure a Store. The zero value is the defaults.
type Options struct {
	// HTTPClient, if set, is the HTTP client of the store's requests
	// (its transport must carry cfg's credentials); nil makes one from
	// the rest.Config.
	HTTPClient *http.Client
}

// Store is a leasehold store on coordination.k8s.io/v1 Leases in one
// namespace.
type Store struct {
	ns     string
	leases coordv1.LeaseInterface
	cfg    *rest.Config
	hc     *http.Client
	conns  *conns // the connections of a client the store made; nil with Options.HTTPClient
	obs    *observations
	rel    *releasedLeases // the Leases this store released: the next acquire writes at once
	closed atomic.Bool     // after Close, every call fails with ErrClosed
}

// New returns a store on the Leases of namespace ns, reached with cfg,
// after probing the server (see the package doc's Open): the credentials
// are accepted, the namespace exists and the user may get, list, watch,
// create and update Leases in it. Each refusal is a *leasehold.StoreError
// naming the namespace and the cause (the verbs refused, and the user).
// o may be nil.
func New(ctx context.Context, cfg *rest.Config, ns string, o *Options) (*Store, error) {
	if o == nil {
		o = &Options{}
	}
	if ns == "" {
		return nil, &leasehold.StoreError{Store: Name, Op: "open", Err: errors.New("no namespace: the store needs the namespace its Leases live in")}
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "leasehold-kube"
	if cfg.QPS == 0 && cfg.RateLimiter == nil {
		// client-go's default limiter (5 requests/s, bursts of 10) queues
		// an acquire or renewal behind a waiter's polls until its grant
		// arrives after the holder's deadline: no client-side limit.
		cfg.QPS = -1
	}
	hc := o.HTTPClient
	var cs *conns
	if hc == nil {
		cs = newConns()
		cfg.Dial = cs.DialContext
		var err error
		if hc, err = rest.HTTPClientFor(cfg); err != nil {
			return nil, &leasehold.StoreError{Store: Name, Op: "open", Err: err}
		}
	}
	c, err := coordv1.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, &leasehold.StoreError{Store: Name, Op: "open", Err: err}
	}
	s := &Store{ns: ns, leases: c.Leases(ns), cfg: cfg, hc: hc, conns: cs, obs: newObservations(), rel: newReleasedLeases()}
	if err := s.probe(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// Info describes the store.
func (s *Store) Info() leasehold.Info {
	return leasehold.Info{Name: Name, MinTTL: MinTTL, MaxTTL: MaxTTL, SafeTokens: true, PortableGrants: true,
		TokenCaveat: "tokens are max(the key's last token, a resourceVersion read before the write) + 1, so deleting or recreating the Lease cannot lower them; they repeat only if the cluster's storage is restored from a backup (its revision goes back). " +
			"Expiry trusts no wall clock: a rival takes a lease only after observing its resourceVersion unchanged for the lease's TTL on its own monotonic clock, as client-go's leaderelection does, so a key abandoned before a process first looks at it is free one TTL after that look"}
}

// Close makes every later call fail with ErrClosed and closes the store's
// connections (only the idle ones of an Options.HTTPClient). It does not
// release leases.
func (s *Store) Close() error {
	s.closed.Store(true)
	s.hc.CloseIdleConnections()
	if s.conns != nil {
		s.conns.closeAll()
	}
	return nil
}

// Namespace returns the store's namespace.
func (s *Store) Namespace() string { return s.ns }

// LeaseName returns the name of key's Lease: "leasehold-" and 40 hex
// digits of the key's SHA-256 (a valid object name for every key, and
// never another key's; the key itself is in an annotation).
func LeaseName(key string) string { return objectName(key) }

// checkOpen reports ErrClosed, as a *leasehold.StoreError, after Close.
func (s *Store) checkOpen(op string) error {
	if s.closed.Load() {
		return &leasehold.StoreError{Store: Name, Op: op, Err: leasehold.ErrClosed}
	}
	return nil
}

// where names a Lease in errors: namespace and name.
func (s *Store) where(name string) string {
	return "namespace " + s.ns + " Lease " + name
}

// err wraps err for op on Lease name in a *leasehold.StoreError, except
// the caller's own context error, returned as is.
func (s *Store) err(ctx context.Context, op, name string, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return ctx.Err()
	}
	var fe *leasehold.ForeignRecordError
	if errors.As(err, &fe) {
		return &leasehold.StoreError{Store: Name, Op: op, Err: err}
	}
	return &leasehold.StoreError{Store: Name, Op: op, Err: fmt.Errorf("%s: %w", s.where(name), describe(err, s.ns))}
}

// describe adds the cause's plain words to an API error: credentials
// refused, RBAC denied (the server's message names the verb and the
// namespace), the namespace missing.
func describe(err error, ns string) error {
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("credentials refused (401): %w", err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("RBAC denied (403): %w", err)
	case isNamespaceMissing(err):
		return fmt.Errorf("namespace %q does not exist: %w", ns, err)
	}
	return err
}

// isNamespaceMissing reports a create refused because its namespace does
// not exist (404 naming a namespace).
func isNamespaceMissing(err error) bool {
	var se apierrors.APIStatus
	if !errors.As(err, &se) || !apierrors.IsNotFound(err) {
		return false
	}
	d := se.Status().Details
	return d != nil && d.Kind == "namespaces"
}

// probe checks the server as New documents.
func (s *Store) probe(ctx context.Context) error {
	fail := func(err error) error {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return ctx.Err()
		}
		return &leasehold.StoreError{Store: Name, Op: "open", Err: err}
	}
	user := "the store's user"
	if a, err := authnv1.NewForConfigAndClient(s.cfg, s.hc); err == nil {
		if u, err := selfUser(ctx, a); err == nil {
			user = fmt.Sprintf("user %q", u)
		} else if apierrors.IsUnauthorized(err) {
			return fail(fmt.Errorf("namespace %s: credentials refused (401): %w", s.ns, err))
		}
	}
	if err := s.dryRunCreate(ctx); err != nil {
		return fail(fmt.Errorf("namespace %s: a dry-run create of a Lease failed: %w", s.ns, describe(err, s.ns)))
	}
	z, err := authzv1.NewForConfigAndClient(s.cfg, s.hc)
	if err != nil {
		return fail(err)
	}
	denied, err := deniedVerbs(ctx, z, s.ns)
	if err != nil {
		return fail(fmt.Errorf("namespace %s: cannot check the rights on Leases: %w", s.ns, describe(err, s.ns)))
	}
	if len(denied) > 0 {
		return fail(fmt.Errorf("namespace %s: RBAC denied: %s may not %v leases (coordination.k8s.io) there; the store needs get, list, watch, create, update and patch",
			s.ns, user, denied))
	}
	return nil
}
