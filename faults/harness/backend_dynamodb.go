package harness

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/leasehold-go/leasehold/dynamodb"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

// DynamoDB is the DynamoDB store on one dynalite (installed by
// scripts/install/dynalite.sh) that keeps its tables in a LevelDB under
// the run's directory, so that a store restart (F9) finds them again, as
// DynamoDB never loses an acknowledged write. The store uses no clock of
// the server's: expiry is clock-free (the waiter's own monotonic clock).
type DynamoDB struct {
	srv *testserver.Dynalite
}

// dynamodbTable is the table the holders use.
const dynamodbTable = "leasehold-faults"

// dynamodbClockNote is why the harness does not step dynalite's clock
// (F11).
const dynamodbClockNote = "the dynamodb store reads no clock of the server's (expiry is judged on the waiter's own " +
	"monotonic clock, tokens floor at the acquirer's), so a step of dynalite's clock changes nothing the store uses"

var errNoDynamoDBClock = errors.New(dynamodbClockNote)

// Name implements Backend.
func (b *DynamoDB) Name() string { return "dynamodb" }

// Start implements Backend: dynalite with its tables under dir, and the
// store's table (the store's MigrateURL).
func (b *DynamoDB) Start(ctx context.Context, dir string) error {
	var err error
	b.srv, err = testserver.StartDynalite(ctx, testserver.DynaliteOptions{Dir: dir, OnDisk: true})
	if err != nil {
		return err
	}
	if err := dynamodb.MigrateURL(ctx, b.URL([]string{b.srv.Addr()})); err != nil {
		return fmt.Errorf("create the table: %w", err)
	}
	return nil
}

// Endpoints implements Backend.
func (b *DynamoDB) Endpoints() []string { return []string{b.srv.Addr()} }

// URL implements Backend: the endpoint is eps[0] (the holder's proxy), and
// the credentials are in the URL, so the holder processes need no AWS_*
// environment (and ignore one they inherit).
func (b *DynamoDB) URL(eps []string) string {
	q := url.Values{}
	q.Set("endpoint", "http://"+eps[0])
	q.Set("region", testserver.DynaliteRegion)
	q.Set("access_key", testserver.DynaliteAccessKey)
	q.Set("secret_key", testserver.DynaliteSecretKey)
	return (&url.URL{Scheme: "dynamodb", Host: dynamodbTable, RawQuery: q.Encode()}).String()
}

// Close implements Backend. The server's folder stays with the run's.
func (b *DynamoDB) Close() error {
	if b.srv != nil {
		b.srv.Kill()
	}
	return nil
}

// PauseStore implements StorePauser.
func (b *DynamoDB) PauseStore() error { return b.srv.Pause() }

// ResumeStore implements StorePauser.
func (b *DynamoDB) ResumeStore() error { return b.srv.Resume() }

// KillStore implements StoreRestarter.
func (b *DynamoDB) KillStore() error { b.srv.Kill(); return nil }

// RestartStore implements StoreRestarter: on the same port and LevelDB.
// DynamoDB keeps its data across any failure, so wipe is not asked for
// (no Wiper).
func (b *DynamoDB) RestartStore(ctx context.Context, _ bool) error { return b.srv.Restart(ctx) }

// CanStepClock implements ClockStepper: there is nothing to step
// (dynamodbClockNote says why).
func (b *DynamoDB) CanStepClock() (bool, string) { return false, dynamodbClockNote }

// StepClock implements ClockStepper: never called, CanStepClock says no.
func (b *DynamoDB) StepClock(time.Duration) error { return errNoDynamoDBClock }

// TakeoverBound implements TakeoverBounder with the dynamodb store's
// documented bound (dynamodb/doc.go), clock-free: a waiter first reads a
// dead holder's last write at most one poll (TTL/3, the Client's retry
// delay cap) after it was made, may take the key once it has seen that
// write unchanged for the TTL, finds that moment within one more poll, and
// its acquire takes dynamodbRequests more.
func (b *DynamoDB) TakeoverBound(ttl time.Duration) float64 {
	return float64(ttl+ttl/3+ttl/3+dynamodbRequests) / float64(ttl)
}

// dynamodbRequests is the allowance for the acquire that takes the key:
// two requests (read the item, write it on its version).
const dynamodbRequests = 100 * time.Millisecond
