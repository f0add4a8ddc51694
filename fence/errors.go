package fence

import (
	"errors"
	"fmt"
)

// Sentinel errors. Check them with errors.Is; the typed errors carry the
// data and match the sentinel they belong to.
var (
	// ErrStale: the token is lower than the highest token the resource has
	// accepted, so its holder has been fenced out. The error is usually a
	// *StaleError.
	ErrStale = errors.New("fence: stale fencing token")
	// ErrMissingToken: a request carries no fencing token.
	ErrMissingToken = errors.New("fence: missing fencing token")
	// ErrMalformedToken: a fencing token is not a decimal uint64, or a
	// request carries more than one.
	ErrMalformedToken = errors.New("fence: malformed fencing token")
	// ErrNoRow: the row to fence does not exist. Fencing needs a row to
	// hold the highest token: create it (with fence 0) before the first
	// check.
	ErrNoRow = errors.New("fence: no such row")
	// ErrInvalidIdentifier: a table or column name given to [Table] is not
	// a plain SQL identifier.
	ErrInvalidIdentifier = errors.New("fence: invalid SQL identifier")
	// ErrTokenRange: a token is above the largest signed 64-bit integer and
	// cannot be stored in a SQL BIGINT column.
	ErrTokenRange = errors.New("fence: token does not fit a signed 64-bit column")
)

// StaleError reports that a token was refused because the resource has
// already accepted a higher one.
type StaleError struct {
	Resource string // what was fenced: a resource name, or table and id; may be empty
	Token    uint64 // the refused token
	Highest  uint64 // the highest token the resource has accepted; 0 if unknown
}

func (e *StaleError) Error() string {
	s := fmt.Sprintf("fence: stale fencing token %d", e.Token)
	if e.Resource != "" {
		s += " for " + e.Resource
	}
	if e.Highest != 0 {
		s += fmt.Sprintf(": a newer holder wrote with token %d", e.Highest)
	}
	return s
}

// Is reports ErrStale.
func (e *StaleError) Is(target error) bool { return target == ErrStale }
