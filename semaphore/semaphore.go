package semaphore

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/leasehold-go/leasehold"
)

// MaxSlots is the largest number of slots a semaphore may have. A waiting
// Acquire subscribes to every slot's key and a full one tries every slot,
// so the bound keeps one Acquire's cost on the store bounded.
const MaxSlots = 1024

// slotInfix separates a semaphore's key from its slot numbers in the slot
// keys: slot i of key K is the lease key K + "/slot/" + i.
const slotInfix = "/slot/"

var (
	// ErrInvalidSlots: the number of slots is below 1 or above MaxSlots.
	ErrInvalidSlots = errors.New("semaphore: invalid number of slots")
	// ErrUnsafeTokens: the store's tokens are not fencing tokens
	// (leasehold.Info.SafeTokens is false, as on Redlock), and the caller
	// did not set Options.AllowUnsafeTokens.
	ErrUnsafeTokens = errors.New("semaphore: the store's tokens are not fencing tokens")
	// ErrSizeMismatch: another caller uses the same semaphore key with more
	// slots than this one. The error is a *SizeError.
	ErrSizeMismatch = errors.New("semaphore: callers disagree on the number of slots")
)

// Options configure a Semaphore. The zero value is the safe default.
type Options struct {
	// AllowUnsafeTokens lets New accept a store whose tokens are not
	// fencing tokens (Info.SafeTokens false: Redlock). Each slot's token
	// then must not be used to reject stale writes; the bound on holders
	// is only as strong as the store's exclusivity.
	AllowUnsafeTokens bool
}

// Semaphore admits at most N holders per key through one client. Its only
// state between calls is a hint per key, the slot its last permit on the
// key released (the next Acquire on that key tries it first); its methods
// are safe for concurrent use, and any number of Semaphores (in any
// processes) with the same N over the same store share the same slots.
type Semaphore struct {
	c     *leasehold.Client
	n     int
	opts  Options
	mu    sync.Mutex
	hints map[string]int // by key: the slot a permit on key released last
}

// maxHints is the number of keys whose released slot a Semaphore remembers
// at most; beyond it, a key's hint makes room by dropping another's.
const maxHints = 64

// New returns a semaphore of n slots acquiring through c. A nil opts means
// the defaults. It refuses n outside [1, MaxSlots] (ErrInvalidSlots) and a
// store whose tokens are not fences unless opts.AllowUnsafeTokens is set
// (ErrUnsafeTokens, with the store's caveat).
func New(c *leasehold.Client, n int, opts *Options) (*Semaphore, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if n < 1 || n > MaxSlots {
		return nil, fmt.Errorf("%w: %d slots, want 1 to %d", ErrInvalidSlots, n, MaxSlots)
	}
	if info := c.Store().Info(); !info.SafeTokens && !o.AllowUnsafeTokens {
		caveat := info.TokenCaveat
		if caveat == "" {
			caveat = "the store does not promise increasing tokens"
		}
		return nil, fmt.Errorf("%w: the %s store: %s (set Options.AllowUnsafeTokens to use it anyway)", ErrUnsafeTokens, info.Name, strings.TrimSuffix(caveat, "."))
	}
	return &Semaphore{c: c, n: n, opts: o, hints: map[string]int{}}, nil
}

// hint returns the slot a permit on key released last, if remembered.
func (s *Semaphore) hint(key string) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.hints[key]
	return i, ok
}

// remember notes that slot of key was released.
func (s *Semaphore) remember(key string, slot int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.hints[key]; !ok && len(s.hints) >= maxHints {
		for k := range s.hints { // drop one, any
			delete(s.hints, k)
			break
		}
	}
	s.hints[key] = slot
}

// Slots returns the semaphore's number of slots, N.
func (s *Semaphore) Slots() int { return s.n }

// SlotKey returns the lease key of slot i of the semaphore on key:
// key + "/slot/" + i. A resource guarded by the semaphore fences by this
// key (each slot has its own token sequence).
func SlotKey(key string, i int) string { return key + slotInfix + strconv.Itoa(i) }

// slotKeys validates key and returns the keys of its n slots. The longest
// slot key is key plus 6 bytes and the digits of n-1, so a key within that
// many bytes of leasehold.MaxKeyLen is refused, naming the slot key.
func slotKeys(key string, n int) ([]string, error) {
	if err := checkKey(key, n); err != nil {
		return nil, err
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = SlotKey(key, i)
	}
	return keys, nil
}

// checkKey validates key as a semaphore key of n slots: a valid key whose
// longest slot key fits within leasehold.MaxKeyLen (see slotKeys).
func checkKey(key string, n int) error {
	if err := leasehold.ValidateKey(key); err != nil {
		return err
	}
	if len(key)+len(slotInfix)+len(strconv.Itoa(n-1)) > leasehold.MaxKeyLen {
		last := SlotKey(key, n-1)
		return fmt.Errorf("%w: semaphore key is %d bytes, so its slot keys (up to %q) are %d, longer than %d",
			leasehold.ErrInvalidKey, len(key), "…"+last[len(key):], len(last), leasehold.MaxKeyLen)
	}
	return nil
}

// FullError reports that every slot of a semaphore is held. It matches
// leasehold.ErrHeld, so callers that handle a held lease handle a full
// semaphore the same way.
type FullError struct {
	Key   string                 // the semaphore's key
	Slots int                    // N
	Held  []*leasehold.HeldError // the holders the last attempt met, by slot; nil where a slot's answer was not a HeldError
}

func (e *FullError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "semaphore %q: all %d slots are held", e.Key, e.Slots)
	sep := ": "
	for i, h := range e.Held {
		if h == nil {
			continue
		}
		fmt.Fprintf(&b, "%sslot %d", sep, i)
		if h.Label != "" {
			b.WriteString(" by " + h.Label)
		}
		if h.Token != 0 {
			fmt.Fprintf(&b, " (token %d)", h.Token)
		}
		sep = ", "
	}
	return b.String()
}

// Is reports leasehold.ErrHeld.
func (e *FullError) Is(target error) bool { return target == leasehold.ErrHeld }

// SizeError reports that a slot beyond this caller's N is held: another
// caller uses the semaphore's key with more slots. It matches
// ErrSizeMismatch.
type SizeError struct {
	Key    string           // the semaphore's key
	Slots  int              // this caller's N
	Holder leasehold.Holder // the holder of slot N (Holder.Key is its slot key)
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("semaphore %q: this caller has %d slots, but slot %d (%q) is held by %q (token %d): callers disagree on the number of slots",
		e.Key, e.Slots, e.Slots, e.Holder.Key, e.Holder.Label, e.Holder.Token)
}

// Is reports ErrSizeMismatch.
func (e *SizeError) Is(target error) bool { return target == ErrSizeMismatch }
