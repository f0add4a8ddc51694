package semaphore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/leasehold-go/leasehold"
)

// Acquire takes a free slot of the semaphore on key. It tries first the
// slot this Semaphore's last permit on key released (a holder that cycles
// finds it free in one attempt), then the others in a random order so
// that contenders spread over them. opts.TTL is each slot's lease TTL (0:
// the client's). With opts.Wait 0 it tries every slot once and returns a
// *FullError (matching leasehold.ErrHeld) when all are held; otherwise it
// waits up to opts.Wait (leasehold.WaitForever: until ctx ends) for a
// slot, woken by the store's notifications on every slot where it has them
// (leasehold.Notifier; a notification is answered by trying the slots it
// named) and backing off with jitter otherwise (then trying every slot),
// then tries once more. It returns a *SizeError when it finds its N slots
// held and slot N held too (a caller with more slots).
func (s *Semaphore) Acquire(ctx context.Context, key string, opts leasehold.AcquireOptions) (*Permit, error) {
	if err := checkKey(key, s.n); err != nil {
		return nil, err
	}
	if opts.Wait < 0 {
		return nil, fmt.Errorf("%w: wait %s is negative", leasehold.ErrInvalidWait, opts.Wait)
	}
	try := leasehold.AcquireOptions{TTL: opts.TTL}
	if opts.Wait == 0 {
		p, _, err := s.tryAll(ctx, key, try)
		return p, err
	}
	return s.wait(ctx, key, try, opts.Wait)
}

// round is one round of slot attempts: the holders met and the last store
// failure.
type round struct {
	s      *Semaphore
	key    string
	full   *FullError // made at the first holder met
	failed error      // the last store failure
}

// try tries slot i. It reports done with the permit, or with an error
// that ends the round; otherwise it notes the holder or the failure.
func (r *round) try(ctx context.Context, i int, try leasehold.AcquireOptions) (p *Permit, err error, done bool) {
	l, err := r.s.c.Acquire(ctx, SlotKey(r.key, i), try)
	if err == nil {
		return &Permit{Lease: l, s: r.s, sem: r.key, slot: i, n: r.s.n}, nil, true
	}
	var he *leasehold.HeldError
	switch {
	case errors.As(err, &he):
		r.fullError().Held[i] = he
	case failure(err) && ctx.Err() == nil:
		r.failed = err
	default:
		return nil, err, true
	}
	return nil, nil, false
}

// fullError returns the round's FullError, made on first use.
func (r *round) fullError() *FullError {
	if r.full == nil {
		r.full = &FullError{Key: r.key, Slots: r.s.n, Held: make([]*leasehold.HeldError, r.s.n)}
	}
	return r.full
}

// tryAll tries each slot once, the hinted one first and the others in a
// random order, and returns the first permit granted. When none is, it
// returns the FullError (also as err), or the last store failure met, or
// the first other error at once.
func (s *Semaphore) tryAll(ctx context.Context, key string, try leasehold.AcquireOptions) (*Permit, *FullError, error) {
	r := &round{s: s, key: key}
	first := rand.IntN(s.n)
	if i, ok := s.hint(key); ok {
		first = i
	}
	if p, err, done := r.try(ctx, first, try); done {
		return p, nil, err
	}
	for _, i := range rand.Perm(s.n) {
		if i == first {
			continue
		}
		if p, err, done := r.try(ctx, i, try); done {
			return p, nil, err
		}
	}
	full := r.fullError()
	if r.failed != nil {
		return nil, full, r.failed
	}
	if err := s.checkSize(ctx, key); err != nil {
		return nil, full, err
	}
	return nil, full, full
}

// trySome tries the given slots once each, in a random order, as tryAll
// does, without the size check (the other slots were held at the last
// round of all of them).
func (s *Semaphore) trySome(ctx context.Context, key string, slots []int, try leasehold.AcquireOptions) (*Permit, *FullError, error) {
	r := &round{s: s, key: key}
	rand.Shuffle(len(slots), func(i, j int) { slots[i], slots[j] = slots[j], slots[i] })
	for _, i := range slots {
		if p, err, done := r.try(ctx, i, try); done {
			return p, nil, err
		}
	}
	full := r.fullError()
	if r.failed != nil {
		return nil, full, r.failed
	}
	return nil, full, full
}

// checkSize reads slot N of key: held means a caller with more slots is
// using the key, and is refused with a *SizeError. The check is a
// detection, not a bound (see the package doc): a failure to read is not
// reported.
func (s *Semaphore) checkSize(ctx context.Context, key string) error {
	h, err := s.c.Store().Holder(ctx, SlotKey(key, s.n))
	if err != nil {
		return nil
	}
	if h.Key == "" {
		h.Key = SlotKey(key, s.n)
	}
	return &SizeError{Key: key, Slots: s.n, Holder: h}
}

// retryable reports an error a waiting Acquire tries again after: all
// slots held, or a failure of the last slot attempt.
func retryable(err error) bool {
	var fe *FullError
	if errors.As(err, &fe) {
		return true
	}
	return failure(err)
}

// failure reports an error of one slot's attempt that another attempt may
// not meet: a store failure, or a grant lost before it was handed over (it
// arrived after the holder's deadline on a slow store or machine).
func failure(err error) bool {
	return (errors.Is(err, leasehold.ErrStore) || errors.Is(err, leasehold.ErrLost)) && !errors.Is(err, leasehold.ErrClosed)
}
