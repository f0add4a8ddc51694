package fence

import (
	"context"
	"sync"
)

// A Guard admits or refuses fencing tokens for named resources. Admit must
// compare and record in one atomic step: if token is greater than or equal
// to the highest token admitted so far for resource, it records token as the
// highest and returns nil; otherwise it records nothing and returns an error
// matching [ErrStale] (preferably a *[StaleError]). Any other error means the
// guard could not decide.
//
// [MemoryGuard] keeps the tokens in memory; a guard over a database row can
// be written with [GuardFunc] and [Table.Check].
type Guard interface {
	Admit(ctx context.Context, resource string, token uint64) error
}

// GuardFunc adapts a function to the [Guard] interface.
type GuardFunc func(ctx context.Context, resource string, token uint64) error

// Admit calls f(ctx, resource, token).
func (f GuardFunc) Admit(ctx context.Context, resource string, token uint64) error {
	return f(ctx, resource, token)
}

// MemoryGuard is a [Guard] that keeps the highest admitted token of each
// resource in memory. Its zero value is ready to use and it is safe for
// concurrent use.
//
// It remembers every resource it has seen for its whole life (one map entry
// each), and it forgets everything when the process restarts: after a
// restart the first token offered for a resource is admitted whatever its
// value. Use a durable guard (for example a database row) when that matters.
type MemoryGuard struct {
	mu      sync.Mutex
	highest map[string]uint64
}

// Admit admits token for resource if it is greater than or equal to the
// highest token admitted for it so far, and records it as the highest.
// Otherwise it returns a *[StaleError]. It never blocks and ignores ctx.
func (g *MemoryGuard) Admit(_ context.Context, resource string, token uint64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	highest, seen := g.highest[resource]
	if seen && token < highest {
		return &StaleError{Resource: resource, Token: token, Highest: highest}
	}
	if g.highest == nil {
		g.highest = make(map[string]uint64)
	}
	g.highest[resource] = token
	return nil
}

// Highest returns the highest token admitted for resource, and whether any
// token has been admitted for it.
func (g *MemoryGuard) Highest(resource string) (uint64, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	highest, ok := g.highest[resource]
	return highest, ok
}
