package postgres

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold-go/leasehold"
)

// AdvisoryStore is the advisory-lock store (Options.Mode Advisory): a
// session-level pg_try_advisory_lock held on a connection taken from the
// pool for the lease's life. It writes no rows. Its grants live in the
// acquiring process (Grant.Private holds the session), and it cannot list
// (the server knows only the hashes of the keys it locks). Besides
// leasehold.Store it implements leasehold.Notifier (LISTEN/NOTIFY) and
// leasehold.BatchRenewer (each lease renewed on its own session). It is safe
// for concurrent use.
type AdvisoryStore struct {
	*core
	st      advStatements
	held    map[*advLease]struct{} // leases with a live session; guarded by core.mu
	watches *watchQueue
}

var (
	_ Store                  = (*AdvisoryStore)(nil)
	_ leasehold.Store        = (*AdvisoryStore)(nil)
	_ leasehold.Notifier     = (*AdvisoryStore)(nil)
	_ leasehold.BatchRenewer = (*AdvisoryStore)(nil)
)

func newAdvisoryStore(q querier, o Options, ownPool *pgxpool.Pool) *AdvisoryStore {
	return &AdvisoryStore{
		core:    newCore(q, o, "postgres-advisory", ownPool),
		st:      advisorySQL(objectNames(o)),
		held:    make(map[*advLease]struct{}),
		watches: newWatchQueue(),
	}
}

// Mode reports Advisory.
func (s *AdvisoryStore) Mode() Mode { return Advisory }

// Info reports the store's bounds. Tokens come from one sequence shared by
// all keys (so they have gaps): durable, and never going back while the
// server keeps committed data (fsync on; with asynchronous replication a
// failover can lose the last commits, and with them the last tokens).
// idle_session_timeout, which enforces the TTL, has millisecond
// granularity. The lock lives in the acquiring session: grants are not
// portable.
func (s *AdvisoryStore) Info() leasehold.Info {
	return leasehold.Info{Name: s.name, MinTTL: 10 * time.Millisecond, MaxTTL: leasehold.MaxTTL, SafeTokens: true}
}

// LockID returns the advisory lock id of key: the bigint passed to
// pg_try_advisory_lock. pg_locks shows it as classid = id >> 32,
// objid = id & 0xffffffff, objsubid = 1. The id depends on the schema and
// table name, which salt the hash.
func (s *AdvisoryStore) LockID(key string) int64 {
	id, _ := s.lockID(key)
	return id
}

// Acquire claims req.Key with one statement on a session of its own, which
// the grant keeps (see the package documentation).
func (s *AdvisoryStore) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	if err := leasehold.CheckAcquire(req, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	if err := s.check(ctx, "acquire"); err != nil {
		return leasehold.Grant{}, err
	}
	id, check := s.lockID(req.Key)
	ms := ttlMillis(req.TTL)
	label := appLabel(req.Label)

	sess, err := s.q.session(ctx)
	if err != nil {
		return leasehold.Grant{}, s.fail(ctx, "acquire", err)
	}
	var (
		ok                bool
		token             int64
		prevApp, prevIdle string
		set1, set2        bool
	)
	err = sess.queryRow(ctx, s.st.acquire, id, check, label, ms).Scan(&ok, &prevApp, &prevIdle, &token, &set1, &set2)
	if err != nil {
		// The statement may have taken the lock before failing (a session
		// lock survives the rollback): discard the session, which ends it.
		// The clean-up belongs to this session, whatever the owner id: it
		// cannot end a lock a later attempt takes on another session, however
		// late the server sees the connection close.
		sess.close(true)
		if tokenLimit(err) && ctx.Err() == nil {
			err = exhausted("sequence "+s.seqName, "its maximum")
			return leasehold.Grant{}, &leasehold.StoreError{Store: s.name, Op: "acquire", Err: err}
		}
		return leasehold.Grant{}, s.fail(ctx, "acquire", err)
	}
	if err := checkToken("sequence "+s.seqName, token); ok && err != nil {
		sess.close(true) // the lock is held: ending the session ends it
		return leasehold.Grant{}, &leasehold.StoreError{Store: s.name, Op: "acquire", Err: err}
	}
	if !ok {
		// Held. Naming the holder would take a scan of pg_locks on every
		// contended attempt; Holder does it when asked (the client asks
		// when a wait runs out).
		sess.close(false)
		return leasehold.Grant{}, &leasehold.HeldError{Key: req.Key}
	}
	l := &advLease{
		s: s, key: req.Key, owner: req.Owner, label: label, token: uint64(token),
		lockID: id, check: check, prevApp: prevApp, prevIdle: prevIdle,
		lost: make(chan struct{}), sess: sess,
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		sess.close(true)
		return leasehold.Grant{}, &leasehold.StoreError{Store: s.name, Op: "acquire", Err: leasehold.ErrClosed}
	}
	s.held[l] = struct{}{}
	s.mu.Unlock()
	l.mu.Lock()
	l.startWatch()
	l.mu.Unlock()
	return leasehold.Grant{
		Key:     req.Key,
		Owner:   req.Owner,
		Label:   req.Label,
		Token:   uint64(token),
		TTL:     time.Duration(ms) * time.Millisecond,
		Lost:    l.lost,
		Private: l,
	}, nil
}

// Renew extends g on its session if that session still holds the lock. A
// lease whose session the server ended (its idle_session_timeout is the
// TTL) is gone.
func (s *AdvisoryStore) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	if err := leasehold.CheckRenew(g, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	if err := s.check(ctx, "renew"); err != nil {
		return leasehold.Grant{}, err
	}
	l, ok := s.lease(g)
	if !ok {
		return leasehold.Grant{}, fmt.Errorf("renew %q (token %d): %w", g.Key, g.Token, leasehold.ErrNotHeld)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sess == nil {
		return leasehold.Grant{}, fmt.Errorf("renew %q (token %d): the lease's session has ended: %w", g.Key, g.Token, leasehold.ErrNotHeld)
	}
	l.stopWatch()
	if l.broken.Load() {
		l.closeSession(true)
		return leasehold.Grant{}, fmt.Errorf("renew %q (token %d): the lease's connection broke: %w", g.Key, g.Token, leasehold.ErrNotHeld)
	}
	ms := ttlMillis(g.TTL)
	classid, objid := lockHalves(l.lockID)
	var held, set1, set2 bool
	err := l.sess.queryRow(ctx, s.st.renew, classid, objid, l.check, int64(l.token), l.label, ms).Scan(&held, &set1, &set2)
	if err != nil {
		if !sessionBroken(err) {
			l.startWatch()
			return leasehold.Grant{}, s.fail(ctx, "renew", err)
		}
		// The session is gone, and its lock with it.
		l.closeSession(true)
		l.markLost()
		if ctx.Err() != nil {
			return leasehold.Grant{}, ctx.Err()
		}
		return leasehold.Grant{}, fmt.Errorf("renew %q (token %d): the lease's session ended (%v): %w", g.Key, g.Token, err, leasehold.ErrNotHeld)
	}
	if !held {
		l.closeSession(true)
		l.markLost()
		return leasehold.Grant{}, fmt.Errorf("renew %q (token %d): the session no longer holds the lock: %w", g.Key, g.Token, leasehold.ErrNotHeld)
	}
	l.startWatch()
	g.TTL = time.Duration(ms) * time.Millisecond
	return g, nil
}

// Release unlocks g's key, restores its session's settings and gives the
// session back to the pool, and wakes the waiters of the key (if any have
// subscribed) in the same statement.
func (s *AdvisoryStore) Release(ctx context.Context, g leasehold.Grant) error {
	if err := leasehold.CheckRelease(g); err != nil {
		return err
	}
	if err := s.check(ctx, "release"); err != nil {
		return err
	}
	l, ok := s.lease(g)
	if !ok {
		return fmt.Errorf("release %q (token %d): %w", g.Key, g.Token, leasehold.ErrNotHeld)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sess == nil {
		return fmt.Errorf("release %q (token %d): %w", g.Key, g.Token, leasehold.ErrNotHeld)
	}
	l.stopWatch()
	if l.broken.Load() {
		l.closeSession(true)
		return fmt.Errorf("release %q (token %d): the lease's connection broke: %w", g.Key, g.Token, leasehold.ErrNotHeld)
	}
	var unlocked, set1, set2, notified bool
	hi, lo := flagHalves(l.lockID)
	err := l.sess.queryRow(ctx, s.st.release, l.lockID, l.prevApp, l.prevIdle, hi, lo, s.channel, l.key).Scan(&unlocked, &set1, &set2, &notified)
	if err != nil {
		// Discarding the session ends it, and the lock with it.
		l.closeSession(true)
		return s.fail(ctx, "release", err)
	}
	if !unlocked {
		l.closeSession(true)
		l.markLost()
		return fmt.Errorf("release %q (token %d): the session no longer held the lock: %w", g.Key, g.Token, leasehold.ErrNotHeld)
	}
	l.closeSession(false)
	return nil
}

// Holder reports who holds key now, from the application_name the holding
// session published (labels are cut to fit: 63 bytes, ASCII).
func (s *AdvisoryStore) Holder(ctx context.Context, key string) (leasehold.Holder, error) {
	if err := leasehold.CheckHolder(key); err != nil {
		return leasehold.Holder{}, err
	}
	if err := s.check(ctx, "holder"); err != nil {
		return leasehold.Holder{}, err
	}
	id, check := s.lockID(key)
	classid, objid := lockHalves(id)
	var (
		held  bool
		app   string
		nowMS int64
	)
	if err := s.q.queryRow(ctx, s.st.holder, classid, objid).Scan(&held, &app, &nowMS); err != nil {
		return leasehold.Holder{}, s.fail(ctx, "holder", err)
	}
	if !held {
		return leasehold.Holder{}, fmt.Errorf("holder %q: %w", key, leasehold.ErrNotHeld)
	}
	object := fmt.Sprintf("the session holding advisory lock %d", id)
	h, ok, err := parseHolderApp(object, app)
	if err != nil {
		return leasehold.Holder{}, &leasehold.StoreError{Store: s.name, Op: "holder", Err: err}
	}
	if !ok {
		// Held, by a session that has not published itself yet (or by
		// something else using the same advisory lock id).
		return leasehold.Holder{Key: key}, nil
	}
	if h.check != check {
		return leasehold.Holder{}, &leasehold.StoreError{Store: s.name, Op: "holder", Err: fmt.Errorf(
			"%w: key %q has lock id %d, which a session holding another key holds; use another key or table name, or the lease-row mode",
			ErrLockIDCollision, key, id)}
	}
	rem, err := h.remaining(object, nowMS)
	if err != nil {
		return leasehold.Holder{}, &leasehold.StoreError{Store: s.name, Op: "holder", Err: err}
	}
	return leasehold.Holder{Key: key, Label: h.label, Token: h.token, Remaining: rem}, nil
}

// advisoryBatchParallel bounds the concurrent renewals of a batch.
const advisoryBatchParallel = 8

// RenewMany renews each grant as Renew would. Each lease lives on its own
// session, so each is renewed on it, up to 8 at a time.
func (s *AdvisoryStore) RenewMany(ctx context.Context, gs []leasehold.Grant) ([]leasehold.RenewResult, error) {
	if err := s.check(ctx, "renew"); err != nil {
		return nil, err
	}
	res := make([]leasehold.RenewResult, len(gs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, advisoryBatchParallel)
	for i, g := range gs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			ng, err := s.Renew(ctx, g)
			res[i] = leasehold.RenewResult{Grant: ng, Err: err}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return res, nil
}

// Subscribe returns a channel that receives a value (coalesced) when key may
// have become free: released by its holder, or the listening connection was
// re-established. Expiry sends nothing. It fails when the server cannot be
// reached. With a database/sql driver other than pgx's stdlib, which cannot
// LISTEN, the channel never fires and waiters rely on their backoff.
func (s *AdvisoryStore) Subscribe(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return s.subscribe(ctx, key)
}

// Migrate runs the migration for the store's options on the store's pool.
func (s *AdvisoryStore) Migrate(ctx context.Context) error { return migrate(ctx, s.q, s.opts) }

// Close stops the notifier, ends the session of every lease still held
// (which releases its lock and closes its Grant.Lost), and closes the pool
// if OpenURL made it. Later calls fail with ErrClosed.
func (s *AdvisoryStore) Close() error {
	if !s.markClosed() {
		return nil
	}
	// No lease joins held once the store is closed (Acquire checks under
	// the same lock).
	s.mu.Lock()
	held := make([]*advLease, 0, len(s.held))
	for l := range s.held {
		held = append(held, l)
	}
	s.mu.Unlock()
	s.shutdown(func() {
		for _, l := range held {
			l.abandon()
		}
		s.watches.close()
	})
	return nil
}

// lease returns g's state if g is a live grant of this store.
func (s *AdvisoryStore) lease(g leasehold.Grant) (*advLease, bool) {
	l, ok := g.Private.(*advLease)
	if !ok || l.s != s || l.key != g.Key || l.owner != g.Owner || l.token != g.Token {
		return nil, false
	}
	return l, true
}

// forget removes a lease from the held set.
func (s *AdvisoryStore) forget(l *advLease) {
	s.mu.Lock()
	delete(s.held, l)
	s.mu.Unlock()
}

// ttlMillis rounds ttl up to whole milliseconds.
func ttlMillis(ttl time.Duration) int64 {
	return int64((ttl + time.Millisecond - 1) / time.Millisecond)
}
