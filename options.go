package leasehold

import "time"

// Defaults used when the corresponding Options field is zero.
const (
	DefaultTTL            = 15 * time.Second
	DefaultRho            = 0.01
	DefaultMargin         = 5 * time.Millisecond
	DefaultReleaseTimeout = 5 * time.Second
)

// Options configure a Client. The zero value means the documented defaults.
type Options struct {
	// TTL is the lease duration when AcquireOptions.TTL is zero.
	// Default DefaultTTL (15 s); at most MaxTTL.
	TTL time.Duration
	// Label names this holder to others (in HeldError and Holder).
	// Default DefaultLabel() ("host:pid").
	Label string
	// Rho bounds the rate error between the holder's clock and the
	// store's: the holder's deadline is t_send + TTL*(1-Rho) - Margin.
	// Zero means DefaultRho (1%), so no drift at all cannot be asked for;
	// any other value must be in (0, 0.5). NaN and ±Inf are refused, as
	// they are for every float option.
	Rho float64
	// Margin is subtracted from every deadline. Zero means DefaultMargin
	// (5 ms); it cannot be negative or above MaxTTL.
	Margin time.Duration
	// RenewFraction is the part of the TTL between renewals, jittered by
	// 10%. Default 1/3. Must be in [0.01, 0.5]: at most a hundred
	// renewals per TTL, and a renewal must leave the
	// holder at least as long to retry as it waited to renew, and an
	// acquire is refused when the latest jittered renewal would not come
	// before the holder's deadline.
	RenewFraction float64
	// ReleaseTimeout bounds a release, which runs on a context detached
	// from the caller's. Default DefaultReleaseTimeout (5 s); negative is
	// refused.
	ReleaseTimeout time.Duration
	// Backoff paces acquire retries while waiting and renew retries after
	// a failure. Default ExpBackoff{} (10 ms doubling to 1 s, full jitter).
	Backoff Backoff
	// OnJeopardy, if set, is called each time a renewal fails without
	// being refused, while the lease is still held: the holder is in
	// jeopardy and will lose the lease at its deadline unless a retry
	// succeeds. Each call runs on a goroutine of its own, so a callback
	// that blocks (or calls Lease.Release) never delays the deadline;
	// calls for one lease may therefore overlap, and a call may run after
	// the lease has ended (check Lease.Err or the Jeopardy's Remaining). A
	// callback that blocks for good holds its goroutine for good.
	OnJeopardy func(Jeopardy)
	// Observer, if set, receives the client's events: acquires, renewals,
	// losses and releases (see Event). Nil means none.
	Observer Observer
	// Clock is the holder's clock. Default SystemClock().
	Clock Clock
}

// Jeopardy describes a failed renewal of a lease that is still held.
type Jeopardy struct {
	Key       string
	Token     uint64
	Remaining time.Duration // holder-side time left before the deadline
	Err       error         // the renewal's error
}

// AcquireOptions tune one acquire. The zero value tries once with the
// client's TTL.
type AcquireOptions struct {
	// TTL of the lease; zero means the client's Options.TTL.
	TTL time.Duration
	// Wait is how long to wait for a held key: zero tries once, a positive
	// duration retries (or waits for the store's notification) up to that
	// long, WaitForever waits until the context ends. Negative is invalid.
	Wait time.Duration
	// MinHold keeps the key held for at least this long after the grant
	// (ShedLock's lockAtLeastFor), measured from the moment the grant
	// reached the client: a Release before then ends the lease's context
	// with ErrReleased at once (the work is over) and returns nil, but the
	// client keeps the grant, renewing it as usual, and frees it in the
	// store when MinHold has passed (reported then as the lease's
	// EventRelease). So a job scheduled on every node and keyed by its tick
	// (TickKey) runs once per tick even when it takes less time than the
	// other nodes' clocks differ. It is kept by the holder: a holder that
	// crashes, or a Client that is closed, frees the key early (a crash at
	// the TTL after the last renewal, Close at once), and a lease lost
	// while kept ends as any lost lease does. Choose a TTL of at least
	// MinHold to keep the key through a crash too. Zero means none;
	// negative or above MaxTTL is refused (ErrInvalidMinHold).
	MinHold time.Duration
}

// WaitForever makes an acquire wait until its context ends.
const WaitForever time.Duration = 1<<63 - 1

func (o Options) withDefaults() (Options, error) {
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	if o.Label == "" {
		o.Label = DefaultLabel()
	}
	if o.Rho == 0 {
		o.Rho = DefaultRho
	}
	if o.Margin == 0 {
		o.Margin = DefaultMargin
	}
	if o.RenewFraction == 0 {
		o.RenewFraction = 1.0 / 3
	}
	if o.ReleaseTimeout == 0 {
		o.ReleaseTimeout = DefaultReleaseTimeout
	}
	if o.Backoff == nil {
		o.Backoff = ExpBackoff{}
	}
	if o.Clock == nil {
		o.Clock = SystemClock()
	}
	return o, o.validate()
}

// renewJitter is the relative jitter of the renew interval.
const renewJitter = 0.1

// FirstRenewal is the latest moment, after the grant's request was sent, at
// which a client with options o starts the first renewal of a lease of ttl:
// ttl x RenewFraction, plus the renew interval's jitter (10%). Zero fields
// take their defaults.
func (o Options) FirstRenewal(ttl time.Duration) time.Duration {
	if o.RenewFraction == 0 {
		o.RenewFraction = 1.0 / 3
	}
	return time.Duration(float64(ttl) * o.RenewFraction * (1 + renewJitter))
}

// HoldFor is how long a holder with options o may act on a grant of ttl
// after sending the request that got or last renewed it: ttl x (1 - Rho) -
// Margin. A Lease's Deadline is that send time plus HoldFor. Zero fields
// take their defaults.
func (o Options) HoldFor(ttl time.Duration) time.Duration {
	if o.Rho == 0 {
		o.Rho = DefaultRho
	}
	if o.Margin == 0 {
		o.Margin = DefaultMargin
	}
	return time.Duration(float64(ttl)*(1-o.Rho)) - o.Margin
}
