package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold-go/leasehold"
)

// Advisory mode: a session-level pg_try_advisory_lock held on a dedicated
// connection for the lease's life.

// lockID derives the advisory lock id of key: the first 8 bytes of
// SHA-256(namespace || key) as a signed 64-bit integer, and a 32-bit check
// (the next 4 bytes, in hex) that the holder publishes so that a colliding
// key is detected instead of silently sharing the lock.
func (s *Store) lockID(key string) (id int64, check string) {
	sum := sha256.Sum256([]byte(s.lockNS + key))
	return int64(binary.BigEndian.Uint64(sum[:8])), hex.EncodeToString(sum[8:12])
}

// LockID returns the advisory lock id of key in advisory mode: the bigint
// passed to pg_try_advisory_lock. pg_locks shows it as classid = id >> 32,
// objid = id & 0xffffffff, objsubid = 1. The id depends on the schema and
// table name, which salt the hash.
func (s *Store) LockID(key string) int64 {
	id, _ := s.lockID(key)
	return id
}

// lockHalves splits a bigint advisory lock id the way pg_locks shows it.
func lockHalves(id int64) (classid, objid int64) {
	u := uint64(id)
	return int64(u >> 32), int64(uint32(u))
}

// appLabel makes a label fit application_name: printable ASCII only (the
// server replaces anything else with '?' anyway).
func appLabel(label string) string {
	b := []byte(label)
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = '?'
		}
	}
	if len(b) > 63 {
		b = b[:63]
	}
	return string(b)
}

// holderApp is what a holder's application_name says: "lh1 <check> <token>
// <expiry unix ms> <label>", cut to 63 bytes.
type holderApp struct {
	check    string
	token    uint64
	expiryMS int64
	label    string
}

func parseHolderApp(app string) (holderApp, bool) {
	f := strings.SplitN(app, " ", 5)
	if len(f) < 4 || f[0] != "lh1" {
		return holderApp{}, false
	}
	tok, err1 := strconv.ParseUint(f[2], 10, 64)
	exp, err2 := strconv.ParseInt(f[3], 10, 64)
	if err1 != nil || err2 != nil {
		return holderApp{}, false
	}
	h := holderApp{check: f[1], token: tok, expiryMS: exp}
	if len(f) == 5 {
		h.label = f[4]
	}
	return h, true
}

func (h holderApp) remaining(nowMS int64) time.Duration {
	if d := h.expiryMS - nowMS; d > 0 {
		return time.Duration(d) * time.Millisecond
	}
	return 0
}

// advLease is the store's state for one advisory grant (Grant.Private).
type advLease struct {
	s          *Store
	key, owner string
	label      string // as published
	token      uint64
	lockID     int64
	check      string
	prevApp    string // the session's settings before the lease, restored on release
	prevIdle   string

	lost     chan struct{}
	lostOnce sync.Once
	broken   atomic.Bool // the watcher saw the connection fail

	mu          sync.Mutex // serialises use of sess
	sess        session    // nil once released or lost
	watchGen    uint64     // bumped by stopWatch: a pending start is void
	watchTimer  *time.Timer
	watchCancel context.CancelFunc
	watchDone   chan struct{}
}

// watchDelay is how long a session stays idle before the watcher starts
// reading it. A lease released sooner (a short critical section) never
// pays for a watcher; one that lives longer has it from then on.
const watchDelay = 20 * time.Millisecond

func (l *advLease) markLost() { l.lostOnce.Do(func() { close(l.lost) }) }

// startWatch arranges for the idle session to be watched from watchDelay on,
// until stopWatch: when the connection breaks (the server restarted, ended
// the session at its idle_session_timeout, or the network failed) the lock
// is gone, so Lost is closed at once instead of at the next renewal. Called
// with mu held.
func (l *advLease) startWatch() {
	gen := l.watchGen
	l.watchTimer = time.AfterFunc(watchDelay, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.watchGen == gen && l.sess != nil && l.watchCancel == nil {
			l.beginWatch()
		}
	})
}

// beginWatch starts the watcher. Called with mu held.
func (l *advLease) beginWatch() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	l.watchCancel, l.watchDone = cancel, done
	sess := l.sess
	go func() {
		defer close(done)
		err := sess.wait(ctx)
		if err == nil || errors.Is(err, errNoWait) {
			return
		}
		l.broken.Store(true)
		l.markLost()
		// Give the connection back now unless an operation is about to
		// use it (it will see broken and do so itself).
		if l.mu.TryLock() {
			if l.sess == sess {
				cancel()
				l.watchCancel, l.watchDone = nil, nil
				l.closeSession(true)
			}
			l.mu.Unlock()
		}
	}()
}

// stopWatch stops the watcher and waits for it. Called with mu held.
func (l *advLease) stopWatch() {
	l.watchGen++
	if l.watchTimer != nil {
		l.watchTimer.Stop()
		l.watchTimer = nil
	}
	if l.watchCancel != nil {
		l.watchCancel()
		<-l.watchDone
		l.watchCancel, l.watchDone = nil, nil
	}
}

// closeSession gives the session back (or discards it) and forgets the
// lease. Called with mu held and the watcher stopped.
func (l *advLease) closeSession(broken bool) {
	if l.sess == nil {
		return
	}
	l.sess.close(broken)
	l.sess = nil
	l.s.forget(l)
}

// abandon ends the lease's session on Store.Close.
func (l *advLease) abandon() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sess == nil {
		return
	}
	l.stopWatch()
	l.closeSession(true)
	l.markLost()
}

func (s *Store) advAcquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
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
	err = sess.queryRow(ctx, s.st.advAcquire, id, check, label, ms).Scan(&ok, &prevApp, &prevIdle, &token, &set1, &set2)
	if err != nil {
		// The statement may have taken the lock before failing (a session
		// lock survives the rollback): discard the session, which ends it.
		// The clean-up belongs to this session, whatever the owner id: it
		// cannot end a lock a later attempt takes on another session, however
		// late the server sees the connection close.
		sess.close(true)
		return leasehold.Grant{}, s.fail(ctx, "acquire", err)
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

func (s *Store) collision(key, op string, id int64) error {
	return &leasehold.StoreError{Store: s.name, Op: op, Err: fmt.Errorf(
		"%w: key %q has lock id %d, which a session holding another key holds; use another key or table name, or the lease-row mode",
		ErrLockIDCollision, key, id)}
}

// lease returns g's advisory state if g is a live grant of this store.
func (s *Store) lease(g leasehold.Grant) (*advLease, bool) {
	l, ok := g.Private.(*advLease)
	if !ok || l.s != s || l.key != g.Key || l.owner != g.Owner || l.token != g.Token {
		return nil, false
	}
	return l, true
}

func (s *Store) advRenew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
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
	err := l.sess.queryRow(ctx, s.st.advRenew, classid, objid, l.check, int64(l.token), l.label, ms).Scan(&held, &set1, &set2)
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

func (s *Store) advRelease(ctx context.Context, g leasehold.Grant) error {
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
	err := l.sess.queryRow(ctx, s.st.advRelease, l.lockID, l.prevApp, l.prevIdle, hi, lo, s.channel, l.key).Scan(&unlocked, &set1, &set2, &notified)
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

func (s *Store) advHolder(ctx context.Context, key string) (leasehold.Holder, error) {
	id, check := s.lockID(key)
	classid, objid := lockHalves(id)
	var (
		held  bool
		app   string
		nowMS int64
	)
	if err := s.q.queryRow(ctx, s.st.advHolder, classid, objid).Scan(&held, &app, &nowMS); err != nil {
		return leasehold.Holder{}, s.fail(ctx, "holder", err)
	}
	if !held {
		return leasehold.Holder{}, fmt.Errorf("holder %q: %w", key, leasehold.ErrNotHeld)
	}
	h, ok := parseHolderApp(app)
	if !ok {
		// Held, by a session that has not published itself yet (or by
		// something else using the same advisory lock id).
		return leasehold.Holder{Key: key}, nil
	}
	if h.check != check {
		return leasehold.Holder{}, s.collision(key, "holder", id)
	}
	return leasehold.Holder{Key: key, Label: h.label, Token: h.token, Remaining: h.remaining(nowMS)}, nil
}
