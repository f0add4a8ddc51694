package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold-go/leasehold"
)

// core is what the two stores share: the pool, the names of the store's
// objects, the closed flag and the notifier.
type core struct {
	q         querier
	opts      Options
	name      string // the store's Info().Name, for errors
	tableName string // quoted and qualified, for messages
	seqName   string // the advisory mode's token sequence, for messages
	channel   string // the NOTIFY channel of this table
	lockNS    string // salt of the lock ids
	ownPool   *pgxpool.Pool
	lis       *listener

	mu     sync.Mutex // guards closed (and AdvisoryStore.held)
	closed bool
}

func newCore(q querier, o Options, name string, ownPool *pgxpool.Pool) *core {
	sum := sha256.Sum256([]byte(o.Schema + "\x00" + o.Table))
	c := &core{
		q:         q,
		opts:      o,
		name:      name,
		tableName: objectNames(o).table,
		seqName:   objectNames(o).seq,
		channel:   "leasehold_" + hex.EncodeToString(sum[:8]),
		lockNS:    "leasehold\x00" + o.Schema + "\x00" + o.Table + "\x00",
		ownPool:   ownPool,
	}
	c.lis = newListener(c)
	return c
}

// check reports the caller's context error, or ErrClosed.
func (c *core) check(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return &leasehold.StoreError{Store: c.name, Op: op, Err: leasehold.ErrClosed}
	}
	return nil
}

// subscribe is both stores' Subscribe.
func (c *core) subscribe(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	if err := c.check(ctx, "subscribe"); err != nil {
		return nil, nil, err
	}
	return c.lis.subscribe(ctx, key)
}

// markClosed marks the store closed and reports whether it was open.
func (c *core) markClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.closed = true
	return true
}

// shutdown stops the notifier, runs then (if not nil), and closes the pool
// if OpenURL made it.
func (c *core) shutdown(then func()) {
	c.lis.close()
	if then != nil {
		then()
	}
	if c.ownPool != nil {
		c.ownPool.Close()
	}
}

// lockID derives the 64-bit lock id of key: the first 8 bytes of
// SHA-256(namespace || key) as a signed integer, and a 32-bit check (the
// next 4 bytes, in hex). An AdvisoryStore locks the id and publishes the
// check, so that a colliding key is detected instead of silently sharing
// the lock; both stores derive the key's waiter flag from the id (see
// flagHalves).
func (c *core) lockID(key string) (id int64, check string) {
	sum := sha256.Sum256([]byte(c.lockNS + key))
	return int64(binary.BigEndian.Uint64(sum[:8])), hex.EncodeToString(sum[8:12])
}

// lockHalves splits a bigint advisory lock id the way pg_locks shows it.
func lockHalves(id int64) (classid, objid int64) {
	u := uint64(id)
	return int64(u >> 32), int64(uint32(u))
}

// flagHalves is the two-int4 advisory key of a waiter flag: the key's lock
// id in the two-int4 key space, apart from the bigint advisory locks.
func flagHalves(id int64) (hi, lo int32) {
	u := uint64(id)
	return int32(u >> 32), int32(u)
}
