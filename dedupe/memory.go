package dedupe

import (
	"context"
	"sync"
)

// Memory is a Record kept in the process's memory: for tests, examples and
// work that is redelivered only within one process's life. Its zero value
// is empty and ready to use. It keeps every id until [Memory.Forget].
type Memory struct {
	mu   sync.Mutex
	done map[string]struct{}
}

// Seen reports whether id has been marked done.
func (m *Memory) Seen(ctx context.Context, id string) (bool, error) {
	if err := m.lock(ctx, id); err != nil {
		return false, err
	}
	defer m.mu.Unlock()
	_, ok := m.done[id]
	return ok, nil
}

// Mark records id as done and reports whether it was the first to.
func (m *Memory) Mark(ctx context.Context, id string) (bool, error) {
	if err := m.lock(ctx, id); err != nil {
		return false, err
	}
	defer m.mu.Unlock()
	if _, ok := m.done[id]; ok {
		return false, nil
	}
	if m.done == nil {
		m.done = map[string]struct{}{}
	}
	m.done[id] = struct{}{}
	return true, nil
}

// lock checks id and ctx, then locks m.
func (m *Memory) lock(ctx context.Context, id string) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	return nil
}

// Forget removes id, so that it counts as not done.
func (m *Memory) Forget(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.done, id)
}

// Len returns the number of ids marked done.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.done)
}
