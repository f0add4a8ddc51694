package postgres

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/leasehold-go/leasehold"
)

// Values the store reads back from the server are checked here, in pure
// functions: a row, a sequence value or an application_name that leasehold
// would not have written is refused as a *leasehold.ForeignRecordError, a
// token counter at its limit as leasehold.ErrTokensExhausted.

// maxAhead is the furthest in the future a lease's expiry can lie by the
// server's clock: the longest TTL, twice over, so that a server clock
// stepped back by up to a day does not turn a lease foreign.
const maxAhead = 2 * leasehold.MaxTTL

// Error codes of a token counter past its limit: a bigint overflow (the
// lease row's token + 1) and a sequence past its maximum (nextval).
const (
	codeNumericOutOfRange = "22003"
	codeSequenceLimit     = "2200H"
)

func foreignRecord(object, reason string) error {
	return &leasehold.ForeignRecordError{Object: object, Reason: reason}
}

// rowObject names a key's row of the lease table in errors.
func rowObject(table, key string) string {
	return fmt.Sprintf("row %q of %s", key, table)
}

// checkToken refuses a token read back that is not a token: zero or
// negative (the store mints tokens from 1 up).
func checkToken(object string, token int64) error {
	if token < 1 {
		return foreignRecord(object, fmt.Sprintf("token %d is not positive", token))
	}
	return nil
}

// leaseRemaining turns the time a lease has left, in seconds by the
// server's clock, into a duration; ok is false when it has ended. A value
// that is not a number, or lies further ahead than any lease's expiry, is
// refused (a planted expires_at of 'infinity' or of the year 5000).
func leaseRemaining(object string, sec float64) (d time.Duration, ok bool, err error) {
	switch {
	case math.IsNaN(sec) || math.IsInf(sec, 0):
		return 0, false, foreignRecord(object, fmt.Sprintf("expires_at is %v seconds away", sec))
	case sec > maxAhead.Seconds():
		return 0, false, foreignRecord(object, fmt.Sprintf("expires_at is %.0f s away, beyond the longest lease (%s)", sec, leasehold.MaxTTL))
	case sec <= 0:
		return 0, false, nil
	}
	d = time.Duration(sec * float64(time.Second))
	return d, d > 0, nil
}

// rowState is what the no-rows path of a lease-row acquire reads: why the
// upsert took nothing.
type rowState struct {
	found     bool
	owned     bool // owner is not NULL
	label     string
	token     int64
	remaining *float64 // seconds until expires_at; nil when NULL
}

// heldOrRefused explains an acquire that took nothing: the key is held
// (a *leasehold.HeldError, with the holder when the row shows one), or the
// row is foreign, or its token is at the limit.
func (r rowState) heldOrRefused(object, key string) error {
	if !r.found {
		return &leasehold.HeldError{Key: key}
	}
	if err := checkToken(object, r.token); err != nil {
		return err
	}
	if r.owned && r.remaining == nil {
		return foreignRecord(object, "it has an owner and no expires_at")
	}
	if r.owned {
		d, ok, err := leaseRemaining(object, *r.remaining)
		if err != nil {
			return err
		}
		if ok {
			return &leasehold.HeldError{Key: key, Label: r.label, Token: uint64(r.token), Remaining: d}
		}
	}
	if r.token == math.MaxInt64 {
		return exhausted(object, strconv.FormatInt(r.token, 10))
	}
	return &leasehold.HeldError{Key: key} // it changed between the two reads
}

func exhausted(object, value string) error {
	return fmt.Errorf("%s: the token is at %s, the largest bigint: %w", object, value, leasehold.ErrTokensExhausted)
}

// tokenLimit reports whether err is the server refusing a token past the
// largest bigint: the lease row's token + 1, or nextval of the sequence.
func tokenLimit(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == codeNumericOutOfRange || pgErr.Code == codeSequenceLimit)
}

// parseHolderApp reads a holder's application_name, "lh1 <check> <token>
// <expiry unix ms> <label>". ours is false for an application_name that is
// not leasehold's (another program holding the same lock id, or a holder
// that has not published itself yet); err refuses one that starts as
// leasehold's but is not: a bad token or expiry. object names it.
func parseHolderApp(object, app string) (h holderApp, ours bool, err error) {
	f := strings.SplitN(app, " ", 5)
	if f[0] != "lh1" {
		return holderApp{}, false, nil
	}
	if len(f) < 4 {
		return holderApp{}, true, foreignRecord(object, fmt.Sprintf("application_name %q is not lh1 <check> <token> <expiry> <label>", app))
	}
	tok, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || tok < 1 || strconv.FormatInt(tok, 10) != f[2] {
		return holderApp{}, true, foreignRecord(object, fmt.Sprintf("application_name %q has token %q, not a positive bigint", app, f[2]))
	}
	exp, err := strconv.ParseInt(f[3], 10, 64)
	if err != nil || exp < 0 {
		return holderApp{}, true, foreignRecord(object, fmt.Sprintf("application_name %q has expiry %q, not Unix milliseconds", app, f[3]))
	}
	h = holderApp{check: f[1], token: uint64(tok), expiryMS: exp}
	if len(f) == 5 {
		h.label = f[4]
	}
	return h, true, nil
}

// remaining is the time h has left at nowMS by the server's clock; an
// expiry further ahead than any lease's, or a clock before 1970, is
// refused.
func (h holderApp) remaining(object string, nowMS int64) (time.Duration, error) {
	if nowMS < 0 {
		return 0, foreignRecord(object, fmt.Sprintf("the server's clock reads %d ms, before 1970", nowMS))
	}
	d := h.expiryMS - nowMS // both >= 0: no overflow
	if d > maxAhead.Milliseconds() {
		return 0, foreignRecord(object, fmt.Sprintf("its expiry is %d ms away, beyond the longest lease (%s)", d, leasehold.MaxTTL))
	}
	return time.Duration(max(d, 0)) * time.Millisecond, nil
}
