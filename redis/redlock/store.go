// Package redlock is a leasehold store over N independent Redis masters,
// following the Redlock algorithm: a lease is held when a majority
// (N/2+1) of the masters granted it within its validity time.
//
// Acquire proposes one token (the wall clock in microseconds, above every
// token the store proposed or saw) and sends the acquire script with it to
// every master at once, reading the monotonic clock before the first
// request. A master grants that token, and only above its own counter, so
// every master of a grant holds the same token. The acquire decides as
// soon as the answers settle it, without waiting for the slowest master:
// it succeeds when a majority granted and the validity, TTL - elapsed -
// drift (drift = TTL*DriftFactor + 2 ms), is still positive; the grant's
// TTL is TTL - drift, counted from that first reading, so the holder's
// deadline never outlives the majority's. A master that grants after that
// joins the grant (Renew extends it, Release deletes it; if the grant was
// released meanwhile, it is deleted at once). A HeldError comes as soon as
// another owner holds a majority, and what the attempt got is released in
// the background. Otherwise the acquire waits for every master (or its
// node timeout), releases what it got on every master and fails: with a
// *leasehold.HeldError when a majority is held by others, with a
// *leasehold.StoreError naming the unreachable masters when too few
// answered; masters whose counter had reached the token make it propose a
// larger one.
//
// Renew extends on every master that granted and succeeds on a majority;
// Release deletes on every master and succeeds on a majority. A master
// whose acquire answer had not come when Acquire returned is included:
// its request waits for that answer. Renew returns as soon as the answers
// settle the outcome (a majority agreed, or no longer can); the slower
// masters' requests finish in the background. Release waits for the answer
// of every master known to hold the grant (each bounded by the node
// timeout), so that once it returns none of them still holds it: with one
// master down, a minority still holding it could not be told from a
// majority by Holder.
//
// A caller whose context ends gets its error at once. The requests in
// flight are not cancelled: they finish in the background, bounded by the
// node timeout, and what an abandoned acquire took is released by its
// tokens. Close waits up to a second for that work, then abandons it.
//
// Tokens are not safe fences (Info.SafeTokens is false): see TokenCaveat.
// Use the redis store on one Redis deployment when you need fencing.
package redlock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold-go/leasehold"
	lhredis "github.com/leasehold-go/leasehold/redis"
	"github.com/leasehold-go/leasehold/redis/internal/core"
)

// Name is the store's name in Info and errors.
const Name = "redlock"

// TokenCaveat says why Redlock's tokens must not be used as fences.
const TokenCaveat = `not a fence: "Redlock does not have any facility for generating fencing tokens" ` +
	`(Kleppmann, How to do distributed locking, 2016). This store proposes one token per acquire (its clock in ` +
	`microseconds, above every token it has seen) and a master grants it only above its own counter, so where ` +
	`two majorities meet, a master that kept its counter orders their tokens; but a master restarted without ` +
	`persistence forgets its counter, and then a client whose clock is behind the previous holder's can win a ` +
	`majority with a smaller token while the first still believes it holds the lease`

// Options configure a Store. The zero value is ready to use.
type Options struct {
	// Prefix starts every Redis key and channel name; see redis.Options.
	Prefix string
	// CloseClients makes Store.Close close the clients too.
	CloseClients bool
	// NodeTimeout bounds each request to one master, so a stopped master
	// costs a bounded slice of the validity. Zero means a tenth of the
	// lease's TTL, at least 250 ms but at most half the TTL.
	NodeTimeout time.Duration
	// DriftFactor is the assumed clock rate error between the client and
	// the masters, as a fraction of the TTL; zero means 0.01. The drift
	// subtracted from the validity is TTL*DriftFactor + 2 ms.
	DriftFactor float64
}

// Store is a Redlock leasehold.Store. It also implements
// leasehold.Notifier (a release publishes on every master; a waiter
// listens on all of them).
type Store struct {
	clients []lhredis.Client
	nodes   []core.Node
	names   core.Names // every node's
	notify  []*core.Notifier
	pools   []pool
	quorum  int
	opts    Options

	// mu orders a round's start after Close's closed flag (it is written
	// under the write lock, checked with inflight.Add under a read lock).
	mu       sync.RWMutex
	closed   atomic.Bool
	inflight sync.WaitGroup // rounds' requests, callers and clean-ups
	workers  sync.WaitGroup // the pools' kept goroutines
	bg       context.Context
	stop     context.CancelFunc // ends bg: Close gave up waiting
	hw       atomic.Uint64      // the largest token proposed or seen
}

var (
	_ leasehold.Store    = (*Store)(nil)
	_ leasehold.Notifier = (*Store)(nil)
)

// New returns a store over the masters reached by clients, which must be
// independent Redis servers (not replicas of one another, not one
// cluster). N should be odd; 3 or 5 is usual. New does no I/O.
func New(clients []lhredis.Client, opts *Options) (*Store, error) {
	if len(clients) == 0 {
		return nil, &leasehold.StoreError{Store: Name, Op: "open", Err: errors.New("no masters")}
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.DriftFactor < 0 || o.DriftFactor >= 0.5 {
		return nil, &leasehold.StoreError{Store: Name, Op: "open", Err: fmt.Errorf("drift factor %v is outside [0, 0.5)", o.DriftFactor)}
	}
	if o.DriftFactor == 0 {
		o.DriftFactor = 0.01
	}
	if o.NodeTimeout < 0 {
		return nil, &leasehold.StoreError{Store: Name, Op: "open", Err: fmt.Errorf("node timeout %s is negative", o.NodeTimeout)}
	}
	names, err := core.NewNames(o.Prefix)
	if err != nil {
		return nil, &leasehold.StoreError{Store: Name, Op: "open", Err: err}
	}
	s := &Store{clients: clients, names: names, quorum: len(clients)/2 + 1, opts: o, pools: make([]pool, len(clients))}
	for i, c := range clients {
		if c == nil {
			return nil, &leasehold.StoreError{Store: Name, Op: "open", Err: fmt.Errorf("client %d is nil", i)}
		}
		s.nodes = append(s.nodes, core.Node{Client: c, Names: names, Cluster: c.Cluster()})
		s.notify = append(s.notify, core.NewNotifier(listener{c}))
		s.pools[i].jobs = make(chan job)
	}
	s.bg, s.stop = context.WithCancel(context.Background())
	return s, nil
}

type listener struct{ c lhredis.Client }

func (l listener) Listen(ctx context.Context, deliver func(string)) (core.Subscription, error) {
	return l.c.Listen(ctx, deliver)
}

// Quorum returns the number of masters that must agree: N/2+1.
func (s *Store) Quorum() int { return s.quorum }

// Info reports the store's bounds; tokens are not safe fences.
func (s *Store) Info() leasehold.Info {
	return leasehold.Info{
		Name:        Name,
		MinTTL:      10 * time.Millisecond,
		MaxTTL:      leasehold.MaxTTL,
		SafeTokens:  false,
		TokenCaveat: TokenCaveat,
		// Renew and release need the per-master state the acquiring
		// process keeps (which masters granted): grants are not portable.
		PortableGrants: false,
	}
}

func (s *Store) drift(ttl time.Duration) time.Duration {
	return time.Duration(float64(ttl)*s.opts.DriftFactor) + 2*time.Millisecond
}

func (s *Store) nodeTimeout(ttl time.Duration) time.Duration {
	if s.opts.NodeTimeout > 0 {
		return s.opts.NodeTimeout
	}
	return min(max(ttl/10, 250*time.Millisecond), ttl/2)
}

func (s *Store) check(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() {
		return &leasehold.StoreError{Store: Name, Op: op, Err: leasehold.ErrClosed}
	}
	return nil
}

// each runs f on every master at once, each with its own timeout, and
// waits for all.
func (s *Store) each(ctx context.Context, timeout time.Duration, f func(ctx context.Context, i int)) {
	var wg sync.WaitGroup
	for i := range s.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			f(nctx, i)
		}()
	}
	wg.Wait()
}

// propose returns the token of a new acquire: the wall clock in
// microseconds, above every token this store proposed or saw.
func (s *Store) propose() uint64 {
	for {
		hw := s.hw.Load()
		p := max(uint64(time.Now().UnixMicro()), hw+1)
		if s.hw.CompareAndSwap(hw, p) {
			return p
		}
	}
}

// seen raises the tokens proposed next above tok.
func (s *Store) seen(tok uint64) {
	for {
		hw := s.hw.Load()
		if tok <= hw || s.hw.CompareAndSwap(hw, tok) {
			return
		}
	}
}
