package clientgo

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	rl "k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/leasehold-go/leasehold"
)

// Options configure a Lock. The zero value records no events.
type Options struct {
	// OnEvent, if not nil, receives the events client-go records on the
	// lock ("became leader", "stopped leading"), prefixed by the
	// identity, as client-go's own LeaseLock words them.
	OnEvent func(event string)
	// OnTerm, if not nil, is called with the term after each successful
	// acquire or renew, before Create or Update returns: the leader's
	// deadline as it moves (to log it, or to arm a watchdog that stops
	// the work at the deadline). It must not call the lock's methods.
	OnTerm func(Term)
}

// Term is this candidate's current term as the leader.
type Term struct {
	// Token is the grant's fencing token, the term's epoch: higher than
	// every earlier leader's on this key (see the store's
	// leasehold.Info.SafeTokens). Give it to the resources the leader
	// writes (the fence package) so that they refuse a deposed leader.
	Token uint64
	// Acquired is when the acquire that won the term was sent (this
	// process's clock).
	Acquired time.Time
	// Deadline is the holder-side deadline: the send time of the last
	// successful acquire or renew plus the TTL the store applied. The store
	// grants the key to nobody else before it; past it this process may no
	// longer lead, whatever client-go believes.
	Deadline time.Time
}

// Lock is a client-go resourcelock.Interface over a leasehold store: the
// leadership is a lease on one key. Its methods are safe for concurrent
// use; client-go calls Get, Create and Update from one goroutine.
type Lock struct {
	store    leasehold.Store
	key      string
	identity string
	opts     Options

	op sync.Mutex // serializes the store calls of Get, Create and Update

	mu   sync.Mutex // guards the fields below
	held *leasehold.Grant
	term Term
	// renewed is the send time of the last successful acquire or renew.
	renewed time.Time
}

var _ rl.Interface = (*Lock)(nil)

// MaxIdentity bounds a candidate's identity, in bytes: a Kubernetes
// object name's length (a pod name fits), which every store reads back
// whole as a holder's label.
const MaxIdentity = 253

// New returns the lock on key in store for the candidate identity (its
// label in the store, which other candidates read back as the
// HolderIdentity: it must be unique among the candidates, at most
// [MaxIdentity] bytes). A nil opts means the defaults. The lock does not
// own the store: the caller closes it after the election ends.
func New(store leasehold.Store, key, identity string, opts *Options) (*Lock, error) {
	if store == nil {
		return nil, errors.New("clientgo: the store is nil")
	}
	if err := leasehold.ValidateKey(key); err != nil {
		return nil, err
	}
	if identity == "" || len(identity) > MaxIdentity {
		return nil, fmt.Errorf("clientgo: the identity is %d bytes: it must be 1 to %d", len(identity), MaxIdentity)
	}
	l := &Lock{store: store, key: key, identity: identity}
	if opts != nil {
		l.opts = *opts
	}
	return l, nil
}

// Identity returns the candidate's identity.
func (l *Lock) Identity() string { return l.identity }

// Describe names the lock in client-go's logs: the store's kind and the key.
func (l *Lock) Describe() string { return "leasehold/" + l.store.Info().Name + "/" + l.key }

// RecordEvent passes client-go's event to Options.OnEvent.
func (l *Lock) RecordEvent(event string) {
	if l.opts.OnEvent != nil {
		l.opts.OnEvent(l.identity + " " + event)
	}
}

// Term returns this candidate's current term, and whether it holds the key
// now by its holder-side deadline. It is the way for the leader (in
// client-go's OnStartedLeading, or a controller-runtime Runnable) to learn
// its epoch.
func (l *Lock) Term() (Term, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held == nil {
		return Term{}, false
	}
	return l.term, time.Now().Before(l.term.Deadline)
}

// grant returns the grant this candidate holds, or nil.
func (l *Lock) grant() *leasehold.Grant {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held
}

// setHeld records g, granted or renewed by a request sent at sent for
// ttl; a nil g forgets the grant.
func (l *Lock) setHeld(g *leasehold.Grant, sent time.Time, ttl time.Duration, acquired bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held = g
	if g == nil {
		l.term = Term{}
		return
	}
	if g.TTL > 0 && g.TTL < ttl {
		ttl = g.TTL
	}
	if acquired {
		l.term = Term{Token: g.Token, Acquired: sent}
	}
	l.term.Deadline = sent.Add(ttl)
	l.renewed = sent
}

// Create acquires the key for ler.HolderIdentity (this candidate): client-go
// calls it when Get found nobody holding the key. It fails with an
// AlreadyExists error (wrapping the *leasehold.HeldError) when another
// candidate got the key first.
func (l *Lock) Create(ctx context.Context, ler rl.LeaderElectionRecord) error {
	l.op.Lock()
	defer l.op.Unlock()
	ttl, err := l.checkRecord(ler)
	if err != nil {
		return err
	}
	err = l.acquire(ctx, ttl)
	var held *leasehold.HeldError
	if errors.As(err, &held) {
		return alreadyExists(l.key, err)
	}
	return err
}

// Update writes ler over the record client-go last read with Get. With
// this candidate's identity it renews the grant this candidate holds
// (compare-and-extend by owner and token), or acquires the key if it holds
// none (a take-over after the previous holder's lease expired by the
// store's clock); with an empty identity (client-go's release) it releases
// the grant. It fails with a Conflict error when the grant is no longer
// this candidate's or another candidate holds the key, so an update based
// on a stale record never succeeds against a live holder.
func (l *Lock) Update(ctx context.Context, ler rl.LeaderElectionRecord) error {
	l.op.Lock()
	defer l.op.Unlock()
	if ler.HolderIdentity == "" {
		return l.release(ctx)
	}
	ttl, err := l.checkRecord(ler)
	if err != nil {
		return err
	}
	if g := l.grant(); g != nil {
		return l.renew(ctx, *g, ttl)
	}
	err = l.acquire(ctx, ttl)
	var held *leasehold.HeldError
	if errors.As(err, &held) {
		return conflict(l.key, err)
	}
	return err
}

// checkRecord refuses a record this lock cannot write, and returns its TTL.
func (l *Lock) checkRecord(ler rl.LeaderElectionRecord) (time.Duration, error) {
	if ler.HolderIdentity != l.identity {
		return 0, fmt.Errorf("clientgo: %s: cannot write a record for %q: this lock is %q's", l.Describe(), ler.HolderIdentity, l.identity)
	}
	if ler.LeaseDurationSeconds < 1 {
		return 0, fmt.Errorf("clientgo: %s: the lease duration is %d s: it must be at least 1 s", l.Describe(), ler.LeaseDurationSeconds)
	}
	return time.Duration(ler.LeaseDurationSeconds) * time.Second, nil
}

// acquire claims the key for this candidate, in one atomic store step.
func (l *Lock) acquire(ctx context.Context, ttl time.Duration) error {
	sent := time.Now()
	g, err := l.store.Acquire(ctx, leasehold.AcquireRequest{Key: l.key, Owner: leasehold.NewOwnerID(), Label: l.identity, TTL: ttl})
	if err != nil {
		return err
	}
	l.setHeld(&g, sent, ttl, true)
	l.reportTerm()
	return nil
}

// renew extends g, the grant this candidate holds, by ttl.
func (l *Lock) renew(ctx context.Context, g leasehold.Grant, ttl time.Duration) error {
	if lost(g) {
		l.setHeld(nil, time.Time{}, 0, false)
		return conflict(l.key, leasehold.ErrNotHeld)
	}
	sent := time.Now()
	g.TTL = ttl
	r, err := l.store.Renew(ctx, g)
	if errors.Is(err, leasehold.ErrNotHeld) {
		l.setHeld(nil, time.Time{}, 0, false)
		return conflict(l.key, err)
	}
	if err != nil {
		return err // the grant may still be held: client-go retries until its RenewDeadline
	}
	l.setHeld(&r, sent, ttl, false)
	l.reportTerm()
	return nil
}

// reportTerm passes the current term to Options.OnTerm.
func (l *Lock) reportTerm() {
	if l.opts.OnTerm == nil {
		return
	}
	l.mu.Lock()
	t := l.term
	l.mu.Unlock()
	l.opts.OnTerm(t)
}

// release ends the grant this candidate holds, if any. A grant already
// gone (or none held) is released: there is nothing left to end.
func (l *Lock) release(ctx context.Context) error {
	g := l.grant()
	if g == nil {
		return nil
	}
	err := l.store.Release(ctx, *g)
	if err != nil && !errors.Is(err, leasehold.ErrNotHeld) {
		return err
	}
	l.setHeld(nil, time.Time{}, 0, false)
	return nil
}

// lost reports whether the store closed g's Lost channel.
func lost(g leasehold.Grant) bool {
	if g.Lost == nil {
		return false
	}
	select {
	case <-g.Lost:
		return true
	default:
		return false
	}
}
