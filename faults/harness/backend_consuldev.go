package harness

import (
	"context"
	"time"

	"github.com/leasehold-go/leasehold/internal/testserver"
)

// ConsulDev is one Consul -dev agent, the way most people first run
// Consul: it keeps its Raft log, entries, sessions and lock-delays in
// memory, so every restart (F9, and F9b, the same here) loses them all. It
// is not in BackendNames (the suite's table is the store table's); run it
// by name for the data-loss figure, e.g.
//
//	faults run -store consul-dev -faults F9b -seconds 120
//
// It has no leader to kill apart from the agent itself (no F10).
type ConsulDev struct {
	c *Consul
}

// Name implements Backend.
func (b *ConsulDev) Name() string { return "consul-dev" }

// TakeoverBound implements TakeoverBounder: a dev agent's sessions and
// lock-delays are the cluster's (see Consul.TakeoverBound).
func (b *ConsulDev) TakeoverBound(ttl time.Duration) float64 { return b.c.TakeoverBound(ttl) }

// Start implements Backend: one dev agent.
func (b *ConsulDev) Start(ctx context.Context, dir string) error {
	c, err := testserver.StartConsul(ctx, testserver.ConsulOptions{Dir: dir})
	if err != nil {
		return err
	}
	b.c = &Consul{c: c}
	return nil
}

// Endpoints implements Backend.
func (b *ConsulDev) Endpoints() []string { return b.c.Endpoints() }

// URL implements Backend.
func (b *ConsulDev) URL(eps []string) string { return b.c.URL(eps) }

// Close implements Backend.
func (b *ConsulDev) Close() error {
	if b.c == nil {
		return nil
	}
	return b.c.Close()
}

// PauseStore implements StorePauser.
func (b *ConsulDev) PauseStore() error { return b.c.PauseStore() }

// ResumeStore implements StorePauser.
func (b *ConsulDev) ResumeStore() error { return b.c.ResumeStore() }

// KillStore implements StoreRestarter.
func (b *ConsulDev) KillStore() error { return b.c.KillStore() }

// RestartStore implements StoreRestarter: the agent starts again empty,
// with or without wipe (it has no data folder).
func (b *ConsulDev) RestartStore(ctx context.Context, _ bool) error {
	return b.c.RestartStore(ctx, false)
}

// WipeMeaningful implements Wiper.
func (b *ConsulDev) WipeMeaningful() bool { return true }

// CanStepClock implements ClockStepper: see Consul.
func (b *ConsulDev) CanStepClock() (bool, string) { return b.c.CanStepClock() }

// StepClock implements ClockStepper; CanStepClock is false.
func (b *ConsulDev) StepClock(d time.Duration) error { return b.c.StepClock(d) }
