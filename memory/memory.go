// Package memory is an in-process leasehold store for tests and examples.
//
// Leases live in a map guarded by a mutex; the process's monotonic clock ends
// them. Tokens come from a per-key counter that is never reset while the
// Store lives, so they are strictly increasing across release and expiry.
// Nothing survives the process: use the sqlite store for a lease shared by
// processes or one that must survive a crash.
package memory

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/leasehold-go/leasehold"
)

// Options configure a Store. The zero value is ready to use.
type Options struct {
	// Now is the store's clock; nil means time.Now. Tests inject a fake
	// clock to step the store's time.
	Now func() time.Time
}

// Store is an in-memory leasehold.Store. It also implements Notifier and
// Lister. The zero value is not usable; call New.
type Store struct {
	*state
	closed bool // guarded by state.mu
}

// state is the data every handle on one store shares.
type state struct {
	now func() time.Time

	mu     sync.Mutex
	leases map[string]entry
	tokens map[string]uint64
	subs   map[string]map[chan struct{}]struct{}
}

type entry struct {
	owner, label string
	token        uint64
	expires      time.Time
}

var (
	_ leasehold.Store    = (*Store)(nil)
	_ leasehold.Notifier = (*Store)(nil)
	_ leasehold.Lister   = (*Store)(nil)
)

// New returns an empty store.
func New(opts *Options) *Store {
	s := &state{
		now:    time.Now,
		leases: make(map[string]entry),
		tokens: make(map[string]uint64),
		subs:   make(map[string]map[chan struct{}]struct{}),
	}
	if opts != nil && opts.Now != nil {
		s.now = opts.Now
	}
	return &Store{state: s}
}

// Reopen returns a new handle on the same leases and counters, as if
// another process opened the same store. Closing one handle does not
// close the others.
func (s *Store) Reopen() *Store { return &Store{state: s.state} }

// Info reports the store's bounds. Tokens are safe for the life of the Store.
func (s *Store) Info() leasehold.Info {
	return leasehold.Info{Name: "memory", MinTTL: time.Millisecond, MaxTTL: leasehold.MaxTTL, SafeTokens: true}
}

func (s *Store) check(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed {
		return &leasehold.StoreError{Store: "memory", Op: op, Err: leasehold.ErrClosed}
	}
	return nil
}

// Acquire claims the key if it is free or expired.
func (s *Store) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	if err := leasehold.CheckAcquire(req, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx, "acquire"); err != nil {
		return leasehold.Grant{}, err
	}
	now := s.now()
	if e, ok := s.leases[req.Key]; ok && now.Before(e.expires) {
		return leasehold.Grant{}, &leasehold.HeldError{Key: req.Key, Label: e.label, Token: e.token, Remaining: e.expires.Sub(now)}
	}
	if s.tokens[req.Key] == math.MaxUint64 {
		return leasehold.Grant{}, &leasehold.StoreError{Store: "memory", Op: "acquire", Err: fmt.Errorf(
			"key %q: the token counter is at %d, the largest token: %w", req.Key, uint64(math.MaxUint64), leasehold.ErrTokensExhausted)}
	}
	s.tokens[req.Key]++
	tok := s.tokens[req.Key]
	s.leases[req.Key] = entry{owner: req.Owner, label: req.Label, token: tok, expires: now.Add(req.TTL)}
	return leasehold.Grant{Key: req.Key, Owner: req.Owner, Label: req.Label, Token: tok, TTL: req.TTL}, nil
}

// Renew extends the lease if the owner and token still hold it. A lease that
// expired but that nobody took since is renewed with the same token.
func (s *Store) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	if err := leasehold.CheckRenew(g, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx, "renew"); err != nil {
		return leasehold.Grant{}, err
	}
	e, ok := s.leases[g.Key]
	if !ok || e.owner != g.Owner || e.token != g.Token {
		return leasehold.Grant{}, fmt.Errorf("renew %q: %w", g.Key, leasehold.ErrNotHeld)
	}
	e.expires = s.now().Add(g.TTL)
	s.leases[g.Key] = e
	return g, nil
}

// Release deletes the lease if the owner and token still hold it, and wakes
// subscribers.
func (s *Store) Release(ctx context.Context, g leasehold.Grant) error {
	if err := leasehold.CheckRelease(g); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx, "release"); err != nil {
		return err
	}
	e, ok := s.leases[g.Key]
	if !ok || e.owner != g.Owner || e.token != g.Token {
		return fmt.Errorf("release %q: %w", g.Key, leasehold.ErrNotHeld)
	}
	delete(s.leases, g.Key)
	for ch := range s.subs[g.Key] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	return nil
}

// Holder reports the current holder of key.
func (s *Store) Holder(ctx context.Context, key string) (leasehold.Holder, error) {
	if err := leasehold.CheckHolder(key); err != nil {
		return leasehold.Holder{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx, "holder"); err != nil {
		return leasehold.Holder{}, err
	}
	now := s.now()
	e, ok := s.leases[key]
	if !ok || !now.Before(e.expires) {
		return leasehold.Holder{}, fmt.Errorf("holder %q: %w", key, leasehold.ErrNotHeld)
	}
	return leasehold.Holder{Key: key, Label: e.label, Token: e.token, Remaining: e.expires.Sub(now)}, nil
}

// List reports the current holders of keys starting with prefix.
func (s *Store) List(ctx context.Context, prefix string) ([]leasehold.Holder, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx, "list"); err != nil {
		return nil, err
	}
	now := s.now()
	var hs []leasehold.Holder
	for k, e := range s.leases {
		if strings.HasPrefix(k, prefix) && now.Before(e.expires) {
			hs = append(hs, leasehold.Holder{Key: k, Label: e.label, Token: e.token, Remaining: e.expires.Sub(now)})
		}
	}
	return hs, nil
}

// Subscribe returns a channel that receives a value when key is released.
// Expiry sends nothing; waiters find it by their backoff.
func (s *Store) Subscribe(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx, "subscribe"); err != nil {
		return nil, nil, err
	}
	ch := make(chan struct{}, 1)
	if s.subs[key] == nil {
		s.subs[key] = make(map[chan struct{}]struct{})
	}
	s.subs[key][ch] = struct{}{}
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			delete(s.subs[key], ch)
			if len(s.subs[key]) == 0 {
				delete(s.subs, key)
			}
		})
	}, nil
}

// Close marks the store closed; later calls fail with ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}
