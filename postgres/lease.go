package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold-go/leasehold"
)

// LeaseStore is the lease-row store (Options.Mode LeaseRow, the default):
// one row per key, claimed by a single upsert whose WHERE clause judges
// expiry by the server's clock. It keeps no session state, so it works
// through PgBouncer in transaction pooling mode, and its grants are
// portable. Besides leasehold.Store it implements leasehold.Notifier
// (LISTEN/NOTIFY), leasehold.BatchRenewer (one statement per batch) and
// leasehold.Lister. It is safe for concurrent use.
type LeaseStore struct {
	*core
	st leaseStatements
}

var (
	_ Store                  = (*LeaseStore)(nil)
	_ leasehold.Store        = (*LeaseStore)(nil)
	_ leasehold.Notifier     = (*LeaseStore)(nil)
	_ leasehold.BatchRenewer = (*LeaseStore)(nil)
	_ leasehold.Lister       = (*LeaseStore)(nil)
)

func newLeaseStore(q querier, o Options, ownPool *pgxpool.Pool) *LeaseStore {
	return &LeaseStore{core: newCore(q, o, "postgres", ownPool), st: leaseSQL(objectNames(o))}
}

// Mode reports LeaseRow.
func (s *LeaseStore) Mode() Mode { return LeaseRow }

// Info reports the store's bounds. Tokens come from a counter in the key's
// row: durable, and never going back while the server keeps committed data
// (fsync on; with asynchronous replication a failover can lose the last
// commits, and with them the last tokens). A lease row is renewed or
// released by owner and token from any process.
func (s *LeaseStore) Info() leasehold.Info {
	return leasehold.Info{Name: s.name, MinTTL: time.Millisecond, MaxTTL: leasehold.MaxTTL, SafeTokens: true, PortableGrants: true}
}

// Acquire claims req.Key in one statement (see the package documentation);
// when the key is held, a second statement reads the holder for the
// *leasehold.HeldError.
// An acquire whose answer was lost is cleaned up (see abandon).
func (s *LeaseStore) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	if err := leasehold.CheckAcquire(req, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	if err := s.check(ctx, "acquire"); err != nil {
		return leasehold.Grant{}, err
	}
	us := ttlMicros(req.TTL)
	var token int64
	err := s.q.queryRow(ctx, s.st.acquire, req.Key, req.Owner, req.Label, us).Scan(&token)
	if err == nil && token < 1 {
		// The upsert takes no row whose token is not positive, so this is
		// never seen; refuse rather than grant it if it ever were.
		return leasehold.Grant{}, &leasehold.StoreError{Store: s.name, Op: "acquire", Err: checkToken(rowObject(s.tableName, req.Key), token)}
	}
	if err != nil {
		if isNoRows(err) {
			return leasehold.Grant{}, s.heldError(ctx, req.Key)
		}
		if ambiguous(err) {
			s.abandon(ctx, req)
		}
		return leasehold.Grant{}, s.fail(ctx, "acquire", err)
	}
	return leasehold.Grant{
		Key:   req.Key,
		Owner: req.Owner,
		Label: req.Label,
		Token: uint64(token),
		TTL:   time.Duration(us) * time.Microsecond,
	}, nil
}

// heldError is the refusal of an acquire that found key held: a
// *leasehold.HeldError naming the holder's label, token and time left when
// a read of the row finds it still held (a waiter uses the time left to
// look again when the lease would expire). When the row is not one
// leasehold wrote, or its token is at the limit, the acquire is refused
// with a *leasehold.StoreError saying so. The read is otherwise best
// effort: if it fails, or the holder has let go since, the error names the
// key alone.
func (s *LeaseStore) heldError(ctx context.Context, key string) error {
	var (
		r   rowState
		rem sql.NullFloat64
	)
	err := s.q.queryRow(ctx, s.st.row, key).Scan(&r.owned, &r.label, &r.token, &rem)
	if err != nil {
		return &leasehold.HeldError{Key: key}
	}
	r.found = true
	if rem.Valid {
		r.remaining = &rem.Float64
	}
	err = r.heldOrRefused(rowObject(s.tableName, key), key)
	if errors.Is(err, leasehold.ErrHeld) {
		return err
	}
	return &leasehold.StoreError{Store: s.name, Op: "acquire", Err: err}
}

// holderOf checks a holder row read back: its token and the time it has
// left.
func (s *LeaseStore) holderOf(key, label string, token int64, sec float64) (leasehold.Holder, bool, error) {
	object := rowObject(s.tableName, key)
	if err := checkToken(object, token); err != nil {
		return leasehold.Holder{}, false, err
	}
	d, ok, err := leaseRemaining(object, sec)
	return leasehold.Holder{Key: key, Label: label, Token: uint64(token), Remaining: d}, ok, err
}

// Renew extends g if its owner and token still hold the key. A lease that
// expired but that nobody has taken since is renewed with its token
// unchanged.
func (s *LeaseStore) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	if err := leasehold.CheckRenew(g, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	if err := s.check(ctx, "renew"); err != nil {
		return leasehold.Grant{}, err
	}
	us := ttlMicros(g.TTL)
	n, err := s.q.exec(ctx, s.st.renew, g.Key, g.Owner, int64(g.Token), us)
	if err != nil {
		return leasehold.Grant{}, s.fail(ctx, "renew", err)
	}
	if n == 0 {
		return leasehold.Grant{}, fmt.Errorf("renew %q (token %d): %w", g.Key, g.Token, leasehold.ErrNotHeld)
	}
	g.TTL = time.Duration(us) * time.Microsecond
	return g, nil
}

// Release ends g if its owner and token still hold the key, and wakes the
// waiters of the key (if any have subscribed) in the same statement.
func (s *LeaseStore) Release(ctx context.Context, g leasehold.Grant) error {
	if err := leasehold.CheckRelease(g); err != nil {
		return err
	}
	if err := s.check(ctx, "release"); err != nil {
		return err
	}
	return s.release(ctx, g)
}

// release is Release after its checks (the abandon clean-up calls it too).
func (s *LeaseStore) release(ctx context.Context, g leasehold.Grant) error {
	var notified bool
	id, _ := s.lockID(g.Key)
	hi, lo := flagHalves(id)
	err := s.q.queryRow(ctx, s.st.release, g.Key, g.Owner, int64(g.Token), hi, lo, s.channel).Scan(&notified)
	if isNoRows(err) {
		return fmt.Errorf("release %q (token %d): %w", g.Key, g.Token, leasehold.ErrNotHeld)
	}
	if err != nil {
		return s.fail(ctx, "release", err)
	}
	return nil
}

// Holder reports who holds key now, by the server's clock.
func (s *LeaseStore) Holder(ctx context.Context, key string) (leasehold.Holder, error) {
	if err := leasehold.CheckHolder(key); err != nil {
		return leasehold.Holder{}, err
	}
	if err := s.check(ctx, "holder"); err != nil {
		return leasehold.Holder{}, err
	}
	var (
		label string
		token int64
		sec   float64
	)
	err := s.q.queryRow(ctx, s.st.holder, key).Scan(&label, &token, &sec)
	if err != nil {
		if isNoRows(err) {
			return leasehold.Holder{}, fmt.Errorf("holder %q: %w", key, leasehold.ErrNotHeld)
		}
		return leasehold.Holder{}, s.fail(ctx, "holder", err)
	}
	h, ok, err := s.holderOf(key, label, token, sec)
	if err != nil {
		return leasehold.Holder{}, &leasehold.StoreError{Store: s.name, Op: "holder", Err: err}
	}
	if !ok {
		return leasehold.Holder{}, fmt.Errorf("holder %q: %w", key, leasehold.ErrNotHeld)
	}
	return h, nil
}

// List reports the current holders of keys starting with prefix, in key
// order.
func (s *LeaseStore) List(ctx context.Context, prefix string) ([]leasehold.Holder, error) {
	if err := s.check(ctx, "list"); err != nil {
		return nil, err
	}
	rs, err := s.q.query(ctx, s.st.list, prefix)
	if err != nil {
		return nil, s.fail(ctx, "list", err)
	}
	defer rs.Close()
	var hs []leasehold.Holder
	for rs.Next() {
		var (
			key, label string
			token      int64
			sec        float64
		)
		if err := rs.Scan(&key, &label, &token, &sec); err != nil {
			return nil, s.fail(ctx, "list", err)
		}
		h, ok, err := s.holderOf(key, label, token, sec)
		if err != nil {
			return nil, &leasehold.StoreError{Store: s.name, Op: "list", Err: err}
		}
		if ok {
			hs = append(hs, h)
		}
	}
	if err := rs.Err(); err != nil {
		return nil, s.fail(ctx, "list", err)
	}
	return hs, nil
}

// Subscribe returns a channel that receives a value (coalesced) when key may
// have become free: released by its holder, or the listening connection was
// re-established. Expiry sends nothing. It fails when the server cannot be
// reached. With a database/sql driver other than pgx's stdlib, which cannot
// LISTEN, the channel never fires and waiters rely on their backoff; so do
// they, silently, through PgBouncer in transaction pooling mode unless
// Options.ListenConnString names a direct connection.
func (s *LeaseStore) Subscribe(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return s.subscribe(ctx, key)
}

// Migrate runs the migration for the store's options on the store's pool.
func (s *LeaseStore) Migrate(ctx context.Context) error { return migrate(ctx, s.q, s.opts) }

// Close stops the notifier and closes the pool if OpenURL made it. Leases
// stay in their rows until their TTLs. Later calls fail with ErrClosed.
func (s *LeaseStore) Close() error {
	if s.markClosed() {
		s.shutdown(nil)
	}
	return nil
}

// ttlMicros rounds ttl up to whole microseconds.
func ttlMicros(ttl time.Duration) int64 {
	return int64((ttl + time.Microsecond - 1) / time.Microsecond)
}
