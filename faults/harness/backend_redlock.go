package harness

import (
	"context"
	"errors"
	"strings"

	"github.com/leasehold-go/leasehold/internal/testserver"

	"github.com/leasehold-go/leasehold/faults/check"
)

// Redlock is three redis-server masters without persistence (the common
// deployment, and the one Redlock's analysis is about). Its store kill (F9)
// restarts one master empty; its store pause (F8) stops all of them.
type Redlock struct {
	srvs []*testserver.Redis
	next int
}

// Name implements Backend.
func (b *Redlock) Name() string { return "redlock" }

// Start implements Backend.
func (b *Redlock) Start(ctx context.Context, dir string) error {
	var err error
	b.next = 0
	b.srvs, err = testserver.StartRedisMasters(ctx, 3, testserver.RedisOptions{Dir: dir})
	return err
}

// Endpoints implements Backend.
func (b *Redlock) Endpoints() []string {
	var out []string
	for _, s := range b.srvs {
		out = append(out, s.Addr())
	}
	return out
}

// URL implements Backend.
func (b *Redlock) URL(eps []string) string { return "redlock://" + strings.Join(eps, ",") + "/0" }

// Close implements Backend.
func (b *Redlock) Close() error {
	for _, s := range b.srvs {
		s.Kill()
	}
	return nil
}

// PauseStore implements StorePauser.
func (b *Redlock) PauseStore() error {
	var errs []error
	for _, s := range b.srvs {
		errs = append(errs, s.Pause())
	}
	return errors.Join(errs...)
}

// ResumeStore implements StorePauser.
func (b *Redlock) ResumeStore() error {
	var errs []error
	for _, s := range b.srvs {
		errs = append(errs, s.Resume())
	}
	return errors.Join(errs...)
}

// KillStore implements StoreRestarter: it kills one master, in turn.
func (b *Redlock) KillStore() error {
	b.srvs[b.next].Kill()
	return nil
}

// RestartStore implements StoreRestarter: the killed master comes back
// empty (no persistence).
func (b *Redlock) RestartStore(ctx context.Context, _ bool) error {
	i := b.next
	b.next = (b.next + 1) % len(b.srvs)
	return b.RestartMaster(ctx, i)
}

// KillMaster implements MajorityStore.
func (b *Redlock) KillMaster(i int) { b.srvs[i].Kill() }

// RestartMaster implements MajorityStore: the master comes back empty.
func (b *Redlock) RestartMaster(ctx context.Context, i int) error {
	b.srvs[i].Kill()
	if err := wipeRedis(b.srvs[i]); err != nil {
		return err
	}
	return b.srvs[i].Restart(ctx)
}

// LossFaults implements GrantLoser: a master restarted empty (F9, and
// the split majority F9m) can let a second holder win a majority while
// the first still holds the key.
func (b *Redlock) LossFaults() []string { return []string{check.F9, check.F9m} }

// WipeMeaningful implements Wiper: F9 already restarts a master empty.
func (b *Redlock) WipeMeaningful() bool { return false }

// WipeNote says why F9b is not a separate fault here.
func (b *Redlock) WipeNote() string {
	return "the masters run without persistence, so F9 already restarts a master without its data"
}
