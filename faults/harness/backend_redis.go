package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold/internal/testserver"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/clock"
)

// Redis is one redis-server with an append-only file fsynced on every
// write (--appendonly yes --appendfsync always), so that F9 (kill and
// restart) keeps the data and F9b (restart without its data) loses it: the
// case of Redis without persistence. Its clock step (F11) is described in
// package clock (faults/clock/shift.go).
type Redis struct {
	srv *testserver.Redis

	clock     string // "faketime", "clockshift" or ""
	clockFile string
	clockNote string
	shift     time.Duration
}

// Name implements Backend.
func (b *Redis) Name() string { return "redis" }

// Start implements Backend.
func (b *Redis) Start(ctx context.Context, dir string) error {
	b.shift = 0
	env, err := b.setupClock(dir)
	if err != nil {
		return err
	}
	b.srv, err = testserver.StartRedis(ctx, testserver.RedisOptions{Dir: dir, Env: env,
		Args: []string{"--appendonly", "yes", "--appendfsync", "always"}})
	return err
}

// Endpoints implements Backend.
func (b *Redis) Endpoints() []string { return []string{b.srv.Addr()} }

// URL implements Backend.
func (b *Redis) URL(eps []string) string { return "redis://" + eps[0] + "/0" }

// Close implements Backend.
func (b *Redis) Close() error {
	if b.srv != nil {
		b.srv.Kill()
	}
	return nil
}

// PauseStore implements StorePauser.
func (b *Redis) PauseStore() error { return b.srv.Pause() }

// ResumeStore implements StorePauser.
func (b *Redis) ResumeStore() error { return b.srv.Resume() }

// KillStore implements StoreRestarter.
func (b *Redis) KillStore() error { b.srv.Kill(); return nil }

// RestartStore implements StoreRestarter: on the same port, with its
// append-only file, or without its data (wipe).
func (b *Redis) RestartStore(ctx context.Context, wipe bool) error {
	if wipe {
		if err := wipeRedis(b.srv); err != nil {
			return err
		}
	}
	return b.srv.Restart(ctx)
}

// WipeMeaningful implements Wiper: losing Redis's data is the case of
// Redis without persistence.
func (b *Redis) WipeMeaningful() bool { return true }

// LossFaults implements GrantLoser: a restart without the data forgets
// every grant (F9b), and a server clock stepped forward expires keys
// early (F11).
func (b *Redis) LossFaults() []string { return []string{check.F9b, check.F11} }

// CanStepClock implements ClockStepper.
func (b *Redis) CanStepClock() (bool, string) { return b.clock != "", b.clockNote }

// StepClock implements ClockStepper: it moves the server's wall clock by d
// more (the steps add up; the harness only steps forward).
func (b *Redis) StepClock(d time.Duration) error {
	b.shift += d
	switch b.clock {
	case "faketime":
		return os.WriteFile(b.clockFile, []byte(fmt.Sprintf("%+ds\n", int64(b.shift/time.Second))), 0o644)
	case "clockshift":
		return clock.WriteShift(b.clockFile, b.shift)
	}
	return errors.New(b.clockNote)
}

// wipeRedis deletes a stopped server's data files (its logs stay).
func wipeRedis(r *testserver.Redis) error { return wipeDir(r.Dir) }

// wipeDir deletes everything in a stopped server's folder but its logs.
func wipeDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".log") {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}
