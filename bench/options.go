package bench

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold"
)

// KeyMode chooses the keys the clients of a run cycle on.
type KeyMode int

const (
	// Distinct gives each client its own key: the store's throughput
	// without contention.
	Distinct KeyMode = iota
	// Hot makes every client cycle on one key: each acquire waits for the
	// current holder's release, so the run measures hand-offs.
	Hot
)

// String returns "distinct" or "hot".
func (m KeyMode) String() string {
	if m == Hot {
		return "hot"
	}
	return "distinct"
}

// ParseKeyMode parses "distinct" or "hot".
func ParseKeyMode(s string) (KeyMode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "distinct":
		return Distinct, nil
	case "hot":
		return Hot, nil
	}
	return 0, fmt.Errorf("bench: key mode %q is neither distinct (one key per client) nor hot (one key for all)", s)
}

// Options configure Run. The zero value runs one client on distinct keys
// for 10 s.
type Options struct {
	// Name labels the results; default the store's Info().Name.
	Name string
	// Clients is the number of concurrent clients; default 1.
	Clients int
	// Duration is how long the clients cycle; default 10 s.
	Duration time.Duration
	// Keys chooses distinct keys or one hot key; default Distinct.
	Keys KeyMode
	// TTL of the leases taken in cycles; default 10 s, raised to the
	// store's MinTTL.
	TTL time.Duration
	// HoldTTL is the TTL of the leases held while the clients cycle, whose
	// renewals are counted; default 1 s, raised to the store's MinTTL.
	HoldTTL time.Duration
	// Holders is the number of leases held (and renewed by a
	// leasehold.Client) while the clients cycle; default 1, negative for
	// none.
	Holders int
	// HandoffRounds is the number of release-to-waiter hand-offs timed
	// after the cycles; default 10, negative for none.
	HandoffRounds int
	// HandoffHold is how long the holder keeps the key while the waiter
	// waits in each hand-off round; default 50 ms.
	HandoffHold time.Duration
	// OpTimeout bounds each acquire (in Hot mode, each wait beyond the
	// run's end), and each release through the client's ReleaseTimeout;
	// default 10 s.
	OpTimeout time.Duration
	// Prefix starts every key the run uses; default "leasehold-bench/"
	// and a random suffix, so runs never meet each other's leases.
	Prefix string
	// Progress, if set, is called every ProgressEvery while the run goes.
	Progress func(Progress)
	// ProgressEvery is the interval between Progress calls; default 500 ms.
	ProgressEvery time.Duration
}

func (o Options) withDefaults(info leasehold.Info) (Options, error) {
	if o.Name == "" {
		o.Name = info.Name
	}
	if o.Clients == 0 {
		o.Clients = 1
	}
	if o.Clients < 0 {
		return o, fmt.Errorf("bench: %d clients: the number of clients must be positive", o.Clients)
	}
	if o.Duration == 0 {
		o.Duration = 10 * time.Second
	}
	if o.Duration < 0 {
		return o, fmt.Errorf("bench: duration %s is negative", o.Duration)
	}
	if o.Keys != Distinct && o.Keys != Hot {
		return o, fmt.Errorf("bench: unknown key mode %d", o.Keys)
	}
	var err error
	if o.TTL, err = ttlFor(o.TTL, 10*time.Second, info); err != nil {
		return o, err
	}
	if o.HoldTTL, err = ttlFor(o.HoldTTL, time.Second, info); err != nil {
		return o, err
	}
	if o.Holders == 0 {
		o.Holders = 1
	}
	if o.HandoffRounds == 0 {
		o.HandoffRounds = 10
	}
	if o.HandoffHold <= 0 {
		o.HandoffHold = 50 * time.Millisecond
	}
	if o.OpTimeout <= 0 {
		o.OpTimeout = 10 * time.Second
	}
	if o.Prefix == "" {
		o.Prefix = NewPrefix()
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 500 * time.Millisecond
	}
	return o, nil
}

// ttlFor returns ttl, or def when ttl is zero, raised to the store's
// minimum and checked against its bounds.
func ttlFor(ttl, def time.Duration, info leasehold.Info) (time.Duration, error) {
	if ttl == 0 {
		ttl = def
	}
	if info.MinTTL > 0 && ttl < info.MinTTL {
		ttl = info.MinTTL
	}
	if err := leasehold.ValidateTTL(ttl, info); err != nil {
		return 0, fmt.Errorf("bench: %w", err)
	}
	return ttl, nil
}

// NewPrefix returns a fresh key prefix, "leasehold-bench/" and 8 random hex
// digits and a slash, so that runs never meet each other's leases.
func NewPrefix() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return "leasehold-bench/" + hex.EncodeToString(b[:]) + "/"
}
