package dynamodb

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	awsddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/leasehold-go/leasehold"
)

// Name is the store's name in errors and Info.
const Name = "dynamodb"

// MinTTL and MaxTTL bound the TTLs the store accepts. A lease is judged
// expired by a waiter that has watched it for its TTL between two reads,
// so a TTL near a round trip to the service would be mostly waiting.
const (
	MinTTL = time.Second
	MaxTTL = leasehold.MaxTTL
)

// MaxSkewLimit is the largest Options.MaxSkew: a bound above it is not a
// bound on a clock that is kept in time.
const MaxSkewLimit = time.Hour

// ErrBadTable is the cause of New's error when the table's key is not the
// store's: a single partition key named "key" of type string.
var ErrBadTable = errors.New("the table's key is not the store's (a partition key \"key\" of type S, no sort key)")

// Options configure a Store. The zero value judges expiry without trusting
// any clock but the waiter's own (clock-free).
type Options struct {
	// MaxSkew, when positive, selects bounded-skew expiry: a lease is
	// expired once the reader's wall clock passes the deadline its holder
	// wrote (the holder's wall clock when it sent the write, plus the TTL)
	// plus MaxSkew. It is safe only while every client's wall clock is
	// within MaxSkew of every other's, and it lets a waiter take an
	// expired lease at its first read instead of after watching it for the
	// TTL. Zero means clock-free expiry (see the package doc); at most
	// MaxSkewLimit.
	MaxSkew time.Duration
}

// Store is a leasehold store on one DynamoDB table.
type Store struct {
	c      *awsddb.Client
	table  string
	skew   time.Duration // 0: clock-free
	seen   *observations // clock-free: what this store has watched
	freed  *freed        // the free items this store's releases wrote
	tr     *http.Transport
	closed atomic.Bool // after Close, every call fails with ErrClosed
}

// New returns a store on table, reached through c, after checking with
// DescribeTable that the table exists, that the credentials are accepted
// and that its key is the store's (else an error wrapping ErrBadTable).
// o may be nil.
func New(ctx context.Context, c *awsddb.Client, table string, o *Options) (*Store, error) {
	if o == nil {
		o = &Options{}
	}
	if o.MaxSkew < 0 || o.MaxSkew > MaxSkewLimit {
		return nil, &leasehold.StoreError{Store: Name, Op: "open", Err: fmt.Errorf("table %s: MaxSkew %s is outside 0 to %s", table, o.MaxSkew, MaxSkewLimit)}
	}
	s := &Store{c: c, table: table, skew: o.MaxSkew, seen: newObservations(), freed: newFreed()}
	out, err := c.DescribeTable(ctx, &awsddb.DescribeTableInput{TableName: &table})
	if err != nil {
		return nil, s.err(ctx, "open", "table "+table, err)
	}
	if reason := checkTable(out.Table); reason != "" {
		return nil, &leasehold.StoreError{Store: Name, Op: "open", Err: fmt.Errorf("table %s (%s): %w: %s", table, s.endpoint(), ErrBadTable, reason)}
	}
	return s, nil
}

// checkTable says what is wrong with t as the store's table; "" when
// nothing is.
func checkTable(t *types.TableDescription) string {
	if t == nil {
		return "DescribeTable described no table"
	}
	if len(t.KeySchema) != 1 || t.KeySchema[0].KeyType != types.KeyTypeHash || t.KeySchema[0].AttributeName == nil ||
		*t.KeySchema[0].AttributeName != KeyAttribute {
		return fmt.Sprintf("its key schema is %s", schemaString(t.KeySchema))
	}
	for _, d := range t.AttributeDefinitions {
		if d.AttributeName != nil && *d.AttributeName == KeyAttribute && d.AttributeType != types.ScalarAttributeTypeS {
			return fmt.Sprintf("its %q attribute is of type %s", KeyAttribute, d.AttributeType)
		}
	}
	return ""
}

func schemaString(ks []types.KeySchemaElement) string {
	s := "["
	for i, k := range ks {
		if i > 0 {
			s += " "
		}
		name := "?"
		if k.AttributeName != nil {
			name = strconv.Quote(*k.AttributeName)
		}
		s += name + " " + string(k.KeyType)
	}
	return s + "]"
}

// Info describes the store.
func (s *Store) Info() leasehold.Info {
	return leasehold.Info{Name: Name, MinTTL: MinTTL, MaxTTL: MaxTTL, SafeTokens: true, PortableGrants: true,
		TokenCaveat: "tokens are max(previous + 1, the acquirer's wall clock in µs), kept in the key's item, which release never deletes; " +
			"they repeat only if someone deletes the item and the next acquirer's clock is behind the last one's by more than the time between their grants. " +
			s.ExpiryMode()}
}

// ExpiryMode says how the store judges that a lease has expired.
func (s *Store) ExpiryMode() string {
	if s.skew > 0 {
		return "Expiry: bounded clock skew (max_skew " + s.skew.String() + "): a lease ends at its holder's written wall-clock deadline plus " + s.skew.String() +
			" by the reader's wall clock; safe while all clients' clocks agree within that."
	}
	return "Expiry: clock-free: a waiter takes a lease only after watching its item unchanged for the TTL on its own monotonic clock; no wall clock is trusted."
}

// MaxSkew returns the store's skew bound; 0 when expiry is clock-free.
func (s *Store) MaxSkew() time.Duration { return s.skew }

// Close closes the idle connections of a store opened by OpenURL (its
// HTTP transport is the store's own). It does not release leases.
func (s *Store) Close() error {
	s.closed.Store(true)
	if s.tr != nil {
		s.tr.CloseIdleConnections()
	}
	return nil
}

// Client returns the store's DynamoDB client.
func (s *Store) Client() *awsddb.Client { return s.c }

// Table returns the store's table.
func (s *Store) Table() string { return s.table }

// checkOpen reports ErrClosed, as a *leasehold.StoreError, after Close.
func (s *Store) checkOpen(op string) error {
	if s.closed.Load() {
		return &leasehold.StoreError{Store: Name, Op: op, Err: leasehold.ErrClosed}
	}
	return nil
}

// object names key's item in errors: the table and the key.
func (s *Store) object(key string) string {
	return "table " + s.table + " item " + KeyAttribute + "=" + strconv.Quote(key)
}

// err wraps err for op on what (a table or an item) in a
// *leasehold.StoreError, except the caller's own context error, returned
// as is.
func (s *Store) err(ctx context.Context, op, what string, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return ctx.Err()
	}
	if fe := (*leasehold.ForeignRecordError)(nil); errors.As(err, &fe) && fe.Object == what {
		return &leasehold.StoreError{Store: Name, Op: op, Err: err} // it names the item already
	}
	return &leasehold.StoreError{Store: Name, Op: op, Err: fmt.Errorf("%s: %w", what, describe(err))}
}

// endpoint names the server in errors.
func (s *Store) endpoint() string {
	if ep := s.c.Options().BaseEndpoint; ep != nil {
		return "endpoint " + *ep
	}
	return "region " + s.c.Options().Region
}
