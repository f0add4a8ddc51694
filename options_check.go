package leasehold

import (
	"fmt"
	"math"
	"time"
)

// Bounds on the float and duration options, checked by New after the
// defaults are filled in. A comparison written as !(lo < x && x < hi) is
// false for NaN, so NaN fails every range as ±Inf does.
const (
	// maxRenewFraction is the largest RenewFraction: a renewal at half the
	// TTL leaves about as long again for its retries.
	maxRenewFraction = 0.5
	// minRenewFraction is the smallest RenewFraction: at most a hundred
	// renewals per TTL. Less is no safer, only a heavier load on the store.
	minRenewFraction = 0.01
	// maxRho is the supremum of Rho: a clock-rate error of half the TTL
	// leaves no lease worth having.
	maxRho = 0.5
	// minRenewInterval is the shortest time between renewals an acquire
	// may ask for (TTL x RenewFraction): a shorter one renews in a loop.
	minRenewInterval = 100 * time.Microsecond
)

// validate refuses an option, defaults filled in, that would make a lease
// that never ends, ends at once or renews in a loop. Each error names the
// field and its value.
func (o Options) validate() error {
	switch {
	case o.TTL < 0 || o.TTL > MaxTTL:
		return fmt.Errorf("leasehold: Options.TTL %s is outside (0, %s]", o.TTL, MaxTTL)
	case !(o.Rho > 0 && o.Rho < maxRho):
		return fmt.Errorf("leasehold: Options.Rho %v is outside (0, %v)", o.Rho, maxRho)
	case o.Margin < 0 || o.Margin > MaxTTL:
		return fmt.Errorf("leasehold: Options.Margin %s is outside [0, %s] (zero means DefaultMargin)", o.Margin, MaxTTL)
	case !(o.RenewFraction >= minRenewFraction && o.RenewFraction <= maxRenewFraction):
		return fmt.Errorf("leasehold: Options.RenewFraction %v is outside [%v, %v]: renewals would come too late to retry before the deadline, or in a loop", o.RenewFraction, minRenewFraction, maxRenewFraction)
	case o.ReleaseTimeout < 0:
		return fmt.Errorf("leasehold: Options.ReleaseTimeout %s is negative", o.ReleaseTimeout)
	}
	return validateBackoff(o.Backoff)
}

// validateBackoff refuses the negative durations of the package's own
// Backoff strategies (a zero ExpBackoff field means its default); a
// Backoff of the caller's own is the caller's to check.
func validateBackoff(b Backoff) error {
	switch b := b.(type) {
	case ExpBackoff:
		if b.Base < 0 || b.Cap < 0 {
			return fmt.Errorf("leasehold: Options.Backoff ExpBackoff{Base: %s, Cap: %s} has a negative duration", b.Base, b.Cap)
		}
	case ConstBackoff:
		if b <= 0 {
			return fmt.Errorf("leasehold: Options.Backoff ConstBackoff(%s) is not positive: waiters would retry in a loop", time.Duration(b))
		}
	}
	return nil
}

// checkInterval refuses a TTL whose renewals, with the client's
// RenewFraction, would come less than minRenewInterval apart.
func (o Options) checkInterval(ttl time.Duration) error {
	iv := float64(ttl) * o.RenewFraction
	if math.IsNaN(iv) || iv < float64(minRenewInterval) {
		return fmt.Errorf("%w: TTL %s renews every %s with RenewFraction %v, more often than every %s", ErrInvalidTTL, ttl, time.Duration(iv), o.RenewFraction, minRenewInterval)
	}
	return nil
}
