package consul

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/sessionpool"
)

// grantRef is a Grant's Private state: the session keeping the grant.
type grantRef struct {
	store *Store
	sess  *session
}

// errSessionGone: Consul refused an acquire because the session is invalid.
var errSessionGone = errors.New("session gone")

// acquireRounds bounds the read-and-lock rounds of one Acquire when the
// entry keeps changing between the read and the lock.
const acquireRounds = 3

// Acquire claims req.Key: it reads the key's entry and, if no session holds
// it, locks it with the store's session in one transaction conditioned on
// the entry being as read:
//
//	[check-not-exists name] or [check-index name ModifyIndex], then
//	[lock name {token, owner tag, label, session TTL, lock-delay} session]
//
// with flags Flags. The condition is what keeps a lock of the store's own
// session from taking an entry that the same session already holds (Consul
// lets a session lock again what it holds), what keeps a lock whose reply
// was lost from landing later over another grant, and what keeps two
// acquirers that read the same entry from both writing the token they
// computed from it. The token, chosen before the lock by tokenAfter and
// written in the value, is max(the entry's token + 1, the store's highest
// token + 1, the agent's clock in µs); it is not the ModifyIndex (the token
// of earlier versions), which release and housekeeping still check. A held
// key costs one read; a free one a read and the transaction. The first
// acquire of a TTL class also creates the class's session.
func (s *Store) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	if err := leasehold.CheckAcquire(req, s.Info()); err != nil {
		if errors.Is(err, leasehold.ErrInvalidTTL) {
			err = fmt.Errorf("leasehold: %s store: acquire %q: %w (TTLs below Consul's %s session minimum are kept on a %s session; "+
				"above %s the session, 1.5 x the TTL, would pass Consul's %s maximum)", Name, req.Key, err, MinSessionTTL, MinSessionTTL, MaxTTL, MaxSessionTTL)
		}
		return leasehold.Grant{}, err
	}
	if err := ctx.Err(); err != nil {
		return leasehold.Grant{}, err
	}
	// A session invalidated under the acquire (errSessionGone) gets one
	// more try on a new one.
	return sessionpool.OnSession(ctx, s.sessions, classOf(req.TTL),
		func(ss *session) (leasehold.Grant, error) { return s.acquireOn(ctx, ss, req) },
		errSessionGone, func(error) error {
			return &leasehold.StoreError{Store: Name, Op: "acquire", Err: fmt.Errorf("key %q: %w", req.Key, ErrSessionLost)}
		}, func(err error) error { return onKey(err, "acquire", req.Key) })
}

func (s *Store) acquireOn(ctx context.Context, ss *session, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	name := s.KeyOf(req.Key)
	t0, err := ss.fresh(ctx, "acquire", req.Key)
	if err != nil {
		return leasehold.Grant{}, err
	}
	ss.Begin(name)
	defer ss.End(name)
	for round := 0; ; round++ {
		kv, _, err := s.cli.KV().Get(name, (&api.QueryOptions{}).WithContext(ctx))
		if err != nil {
			return leasehold.Grant{}, storeErr(ctx, "acquire", req.Key, err)
		}
		if kv != nil && kv.Session != "" {
			return leasehold.Grant{}, heldError(req.Key, kv)
		}
		g, changed, err := s.lock(ctx, ss, req, name, kv, t0)
		if !changed {
			return g, err
		}
		if round == acquireRounds-1 {
			return leasehold.Grant{}, &leasehold.StoreError{Store: Name, Op: "acquire",
				Err: fmt.Errorf("key %q: its entry changed between the read and the lock %d times in a row", req.Key, acquireRounds)}
		}
	}
}

// lock runs the locking transaction on name, which was kv when read (nil:
// missing). changed reports that the entry changed since: read it again.
func (s *Store) lock(ctx context.Context, ss *session, req leasehold.AcquireRequest, name string, kv *api.KVPair, t0 time.Time) (g leasehold.Grant, changed bool, err error) {
	cond := &api.KVTxnOp{Verb: api.KVCheckNotExists, Key: name}
	if kv != nil {
		cond = &api.KVTxnOp{Verb: api.KVCheckIndex, Key: name, Index: kv.ModifyIndex}
	}
	tag := ownerTag(req.Owner)
	token, err := s.tokenAfter(req.Key, kv)
	if err != nil {
		return g, false, err
	}
	val := encodeValue(req.Owner, req.Label, token, ss)
	ok, resp, _, err := s.cli.Txn().Txn(api.TxnOps{
		{KV: cond},
		{KV: &api.KVTxnOp{Verb: api.KVLock, Key: name, Value: val, Flags: Flags, Session: ss.id}},
	}, (&api.QueryOptions{}).WithContext(ctx))
	if err != nil {
		// The lock may have been applied with its reply lost: have
		// housekeeping unlock it if it turns up held for this owner.
		ss.AddOrphan(orphan{name: name, tag: tag, until: time.Now().Add(orphanWatch)})
		return g, false, storeErr(ctx, "acquire", req.Key, err)
	}
	if !ok {
		switch {
		case txnSays(resp.Errors, "lock delay"):
			return g, false, lockDelayed(req.Key, kv)
		case txnSays(resp.Errors, "invalid session"):
			ss.markLost()
			return g, false, errSessionGone
		case txnSays(resp.Errors, "index check"), txnSays(resp.Errors, "exists"), txnSays(resp.Errors, "already held"):
			return g, true, nil
		}
		return g, false, storeErr(ctx, "acquire", req.Key, txnError(resp.Errors))
	}
	var index uint64
	for _, r := range resp.Results {
		if r != nil && r.KV != nil && r.KV.Key == name && r.KV.Session == ss.id {
			index = r.KV.ModifyIndex
		}
	}
	if index == 0 {
		ss.AddOrphan(orphan{name: name, tag: tag, until: time.Now().Add(orphanWatch)})
		return g, false, &leasehold.StoreError{Store: Name, Op: "acquire", Err: fmt.Errorf("key %q: Consul's answer to the lock has no entry", req.Key)}
	}
	s.high.see(token, s.clock)
	g, err = s.granted(ss, req, name, tag, grantRec{tag: tag, token: token, index: index, value: val}, t0)
	return g, false, err
}

// tokenAfter returns the token for a grant of key over its entry kv (nil:
// missing): max(the entry's token + 1, the store's highest token + 1, the
// agent's clock in µs). An entry released by the old version (see
// legacyReleased) counts as having the token ModifyIndex. The lock's transaction is conditioned on the entry
// being kv, so no other grant can take the same token from it.
func (s *Store) tokenAfter(key string, kv *api.KVPair) (uint64, error) {
	var prev uint64
	switch {
	case kv != nil && legacyReleased(kv):
		// Released by the old version (token = ModifyIndex): its previous
		// token is its ModifyIndex.
		prev = kv.ModifyIndex
	case kv != nil:
		v, err := parseEntry(kv)
		if err != nil {
			// Not leasehold's: someone else's data under the prefix, or a
			// corrupted entry. Writing over it would destroy it (and a
			// corrupted token could let a token repeat).
			return 0, foreignEntry("acquire", key, kv, err)
		}
		prev = max(kv.ModifyIndex, v.Token)
	}
	now, _ := s.clock.micros()
	token, ok := nextToken(prev, s.high.v.Load(), now)
	if !ok {
		return 0, &leasehold.StoreError{Store: Name, Op: "acquire", Err: fmt.Errorf("key %q: its token is %d, the largest a token can be: %w",
			key, uint64(math.MaxUint64), leasehold.ErrTokensExhausted)}
	}
	return token, nil
}

// lockDelayed is the refusal of key during Consul's lock-delay after the
// session that locked kv, its entry, was invalidated: it names that
// session's lock-delay, stored in the entry's value, or Consul's maximum
// when the value does not say.
func lockDelayed(key string, kv *api.KVPair) *leasehold.HeldError {
	delay := fmt.Sprintf("up to Consul's maximum of %s: the entry does not say that session's", MaxLockDelay)
	if kv != nil {
		if v, ok := decodeEntry(kv); ok && v.LockDelayMS > 0 {
			delay = fmt.Sprintf("%s, as that session set it", time.Duration(v.LockDelayMS)*time.Millisecond)
		}
	}
	return &leasehold.HeldError{Key: key, Label: "nobody: Consul's lock-delay after the previous holder's session was invalidated (" + delay + ")"}
}

// onKey returns err, a session's error, as a *leasehold.StoreError of op
// that names key.
func onKey(err error, op, key string) error {
	var se *leasehold.StoreError
	if !errors.As(err, &se) {
		return err
	}
	return &leasehold.StoreError{Store: Name, Op: op, Err: fmt.Errorf("key %q: %s: %w", key, se.Op, se.Err)}
}

// heldError describes the holder of key from its entry.
func heldError(key string, kv *api.KVPair) *leasehold.HeldError {
	h := &leasehold.HeldError{Key: key}
	if v, ok := decodeEntry(kv); ok {
		h.Label = v.Label
		h.Token = v.Token
		return h
	}
	h.Label = foreignHolder(kv)
	return h
}

// foreignHolder names the holder of an entry not locked by leasehold.
func foreignHolder(kv *api.KVPair) string {
	return fmt.Sprintf("a Consul session not made by leasehold (session %s, lock index %d)", kv.Session, kv.LockIndex)
}

// granted records a grant of token won by a request sent at t0.
func (s *Store) granted(ss *session, req leasehold.AcquireRequest, name, tag string, rec grantRec, t0 time.Time) (leasehold.Grant, error) {
	ttl, ok := ss.track(name, rec, t0)
	if !ok {
		// The session was lost while the request was in flight: its entry
		// is released or about to be. No grant.
		ctx, cancel := context.WithTimeout(s.sessions.Ctx(), destroyTimeout)
		_, _ = ss.unlock(ctx, name, rec.index, ss.id, rec.value) // best effort
		cancel()
		return leasehold.Grant{}, &leasehold.StoreError{Store: Name, Op: "acquire", Err: fmt.Errorf("key %q: %w", req.Key, ErrSessionLost)}
	}
	return leasehold.Grant{
		Key: req.Key, Owner: req.Owner, Label: req.Label,
		Token:   rec.token,
		TTL:     ttl,
		Lost:    ss.Done(),
		Private: &grantRef{store: s, sess: ss},
	}, nil
}
