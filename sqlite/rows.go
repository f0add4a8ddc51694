package sqlite

import (
	"fmt"
	"math"
	"time"

	"github.com/leasehold-go/leasehold"
)

// maxAhead is the furthest in the future a lease's expiry can lie by the
// host's clock: the longest TTL, twice over, so that a clock stepped back by
// up to a day does not turn a lease foreign.
const maxAhead = 2 * leasehold.MaxTTL

// leaseRow is a key's row as read back from the file.
type leaseRow struct {
	token   int64
	owned   bool  // owner is not NULL
	expires int64 // Unix nanoseconds
}

// rowObject names a key's row in errors.
func rowObject(path, key string) string {
	return fmt.Sprintf("row %q of leasehold_leases in %s", key, path)
}

// checkRow refuses a row leasehold would not have written: a token that
// is not positive, or a lease expiring further ahead of now than any
// lease's TTL (a planted expiry that would hold the key for ever). The
// error is a *leasehold.ForeignRecordError naming object.
func checkRow(object string, r leaseRow, now time.Time) error {
	if r.token < 1 {
		return &leasehold.ForeignRecordError{Object: object, Reason: fmt.Sprintf("token %d is not positive", r.token)}
	}
	if n := now.UnixNano(); r.owned && r.expires > n && r.expires-n > int64(maxAhead) {
		return &leasehold.ForeignRecordError{Object: object, Reason: fmt.Sprintf(
			"it expires %s from now, beyond the longest lease (%s)", time.Duration(r.expires-n).Round(time.Second), leasehold.MaxTTL)}
	}
	return nil
}

// nextToken is the token after last, or leasehold.ErrTokensExhausted when
// last is the largest the token column holds.
func nextToken(key string, last int64) (int64, error) {
	if last == math.MaxInt64 {
		return 0, fmt.Errorf("key %q has used every token (its token is %d, the largest the file holds): %w", key, last, leasehold.ErrTokensExhausted)
	}
	return last + 1, nil
}
