package harness

import (
	"os"
	"path/filepath"

	"github.com/leasehold-go/leasehold/faults/clock"
)

// setupClock finds a way to step the server's clock (clock.Probe: once per
// process) and returns the environment that installs it: libfaketime if
// redis-server runs under it, else the clockshift library. The offset
// file, which StepClock rewrites, is in dir.
func (b *Redis) setupClock(dir string) ([]string, error) {
	m := clock.Probe()
	b.clock = m.Mode
	b.clockNote = m.Note
	switch b.clock {
	case clock.Faketime:
		b.clockFile = filepath.Join(dir, "faketime")
		return m.Env(b.clockFile), os.WriteFile(b.clockFile, []byte("+0\n"), 0o644)
	case clock.Clockshift:
		b.clockFile = filepath.Join(dir, "clockshift")
		return m.Env(b.clockFile), clock.WriteShift(b.clockFile, 0)
	}
	return nil, nil
}
