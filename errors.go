package leasehold

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors. Check them with errors.Is; the typed errors below carry
// the data and match the sentinel they belong to.
var (
	// ErrHeld: the key is held by another owner. The error is a *HeldError.
	ErrHeld = errors.New("leasehold: held by another owner")
	// ErrNotHeld: the caller does not hold the key (renew or release of a
	// grant that expired and was taken, was released, or never existed).
	ErrNotHeld = errors.New("leasehold: not held by this owner")
	// ErrLost: a lease the caller held has ended without the caller
	// releasing it. The error is a *LostError whose Reason says why.
	ErrLost = errors.New("leasehold: lease lost")
	// ErrExpired: the holder's own deadline passed without a successful
	// renewal. It is the Reason of a *LostError.
	ErrExpired = errors.New("leasehold: lease deadline passed without renewal")
	// ErrReleased: the lease was released by its holder. It is the cause
	// of a released lease's context.
	ErrReleased = errors.New("leasehold: lease released")
	// ErrInvalidKey: the key is empty, too long or holds control bytes.
	ErrInvalidKey = errors.New("leasehold: invalid key")
	// ErrInvalidTTL: the TTL is not positive or outside the store's bounds.
	ErrInvalidTTL = errors.New("leasehold: invalid TTL")
	// ErrInvalidWait: the wait is negative.
	ErrInvalidWait = errors.New("leasehold: invalid wait")
	// ErrInvalidMinHold: AcquireOptions.MinHold is negative or above
	// MaxTTL.
	ErrInvalidMinHold = errors.New("leasehold: invalid MinHold")
	// ErrStore: the store failed or could not be reached. The error is a
	// *StoreError.
	ErrStore = errors.New("leasehold: store failure")
	// ErrInsufficientTime: a checkpoint needed more lease time than is left.
	ErrInsufficientTime = errors.New("leasehold: not enough lease time left")
	// ErrClosed: the client or store has been closed.
	ErrClosed = errors.New("leasehold: closed")
	// ErrTokensExhausted reports that a key's fencing token has reached the
	// largest value its store can hold (a planted or corrupted counter):
	// the store grants the key no more leases rather than wrap to a lower
	// token. It comes wrapped in a *StoreError; nothing is held.
	ErrTokensExhausted = errors.New("leasehold: the key's fencing tokens are exhausted")
	// ErrForeignRecord reports a value read back from the store (a lease
	// record, a counter, metadata, a node name) that is not a valid record
	// of leasehold's. It comes as a *ForeignRecordError inside a
	// *StoreError; the store refuses to act on it.
	ErrForeignRecord = errors.New("leasehold: not a leasehold record")
)

// ForeignRecordError reports a value read back from a store that is not a
// valid leasehold record: a planted, corrupted or foreign object. It names
// the object and what is wrong with it; it matches ErrForeignRecord.
type ForeignRecordError struct {
	Object string // the store's name for it: a key, a path, an object or blob name
	Reason string // what is wrong, e.g. `ttl_ms 9e18 is out of range`
}

func (e *ForeignRecordError) Error() string {
	return fmt.Sprintf("%s is not a leasehold record: %s", e.Object, e.Reason)
}

// Is reports ErrForeignRecord.
func (e *ForeignRecordError) Is(target error) bool { return target == ErrForeignRecord }

// HeldError reports that a key is held by someone else.
type HeldError struct {
	Key       string
	Label     string        // the holder's label, if the store knows it
	Token     uint64        // the holder's token, if the store knows it
	Remaining time.Duration // the holder's time left by the store's clock; 0 if unknown
}

func (e *HeldError) Error() string {
	s := fmt.Sprintf("leasehold: key %q is held", e.Key)
	if e.Label != "" {
		s += " by " + e.Label
	}
	if e.Token != 0 {
		s += fmt.Sprintf(" (token %d)", e.Token)
	}
	if e.Remaining > 0 {
		s += fmt.Sprintf(" for another %s", e.Remaining.Round(time.Millisecond))
	}
	return s
}

// Is reports ErrHeld.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// LostError reports that a lease ended without its holder releasing it.
type LostError struct {
	Key    string
	Token  uint64
	Reason error // ErrNotHeld (refused by the store), ErrExpired (deadline), or the store's own signal
}

func (e *LostError) Error() string {
	return fmt.Sprintf("leasehold: lease on %q (token %d) lost: %v", e.Key, e.Token, e.Reason)
}

// Is reports ErrLost.
func (e *LostError) Is(target error) bool { return target == ErrLost }

// Unwrap returns the reason.
func (e *LostError) Unwrap() error { return e.Reason }

// StoreError reports a failure of the store: unreachable, timed out,
// misconfigured, or an answer it could not understand.
type StoreError struct {
	Store string // the store's name
	Op    string // "acquire", "renew", "release", "holder", "open", ...
	Err   error
}

func (e *StoreError) Error() string {
	return fmt.Sprintf("leasehold: %s store: %s: %v", e.Store, e.Op, e.Err)
}

// Is reports ErrStore.
func (e *StoreError) Is(target error) bool { return target == ErrStore }

// Unwrap returns the underlying error.
func (e *StoreError) Unwrap() error { return e.Err }

var errShortBatch = errors.New("batch renewal returned fewer results than grants")
