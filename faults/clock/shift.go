package clock

import (
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/leasehold-go/leasehold/internal/testserver"
)

// The Redis server's clock step (F11) needs a wall clock the harness can
// move for the server alone: stepping the host's would move every
// process's clock, the holders' and the harness's included.
//
// Debian's libfaketime does that when redis-server runs under it: the
// harness writes the offset to a file that libfaketime rereads on every
// call (FAKETIME_NO_CACHE). But libfaketime's initialisation can recurse
// through jemalloc in Debian's redis-server and crash it, so the harness
// has a fallback of its own: clockshift, a small LD_PRELOAD library whose C
// source (clockshift.c.txt) is embedded in the harness binary below.
//
// clockshift replaces clock_gettime, gettimeofday and time: for
// CLOCK_REALTIME (and CLOCK_REALTIME_COARSE) it adds an offset in
// nanoseconds, read from a file it maps at load time (CLOCKSHIFT_FILE),
// and leaves the monotonic clocks alone. It never calls malloc, which is
// what makes it load where libfaketime does not. The harness steps the
// clock by writing a new offset into that file (WriteShift); the server
// sees it on its next call, with no signal and no restart.
//
// It is compiled at run time, with the machine's cc, into a temporary
// folder, because it must match the machine's C library and the harness
// ships as Go source only; the source has the .txt extension so that the
// Go tool does not try to build it as part of the package. Probe tries
// libfaketime first, then clockshift, once per process, each under a
// throwaway redis-server; the harness's Redis backend then runs the
// store's server under whichever worked (Method.Env), and reports which,
// or why neither did (Method.Note).

//go:embed clockshift.c.txt
var clockshiftC string

// The ways Probe can find to step a server's wall clock.
const (
	Faketime   = "faketime"   // Debian's libfaketime; the offset file holds "+<seconds>s"
	Clockshift = "clockshift" // the clockshift library; the offset file is written by WriteShift
)

// Method is how (and whether) redis-server's wall clock can be stepped on
// this machine.
type Method struct {
	Mode string // Faketime, Clockshift, or "" when neither works
	Lib  string // the LD_PRELOAD library
	Note string // which way was found, or why none was
}

// Env returns the environment that runs a server under m, reading its
// clock offset from file (nil when m.Mode is "").
func (m Method) Env(file string) []string {
	switch m.Mode {
	case Faketime:
		return faketimeEnv(m.Lib, file)
	case Clockshift:
		return []string{"LD_PRELOAD=" + m.Lib, "CLOCKSHIFT_FILE=" + file}
	}
	return nil
}

// faketimeLibs are where Debian's faketime package puts libfaketime.
var faketimeLibs = []string{
	"/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
	"/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
	"/usr/lib/faketime/libfaketime.so.1",
}

func faketimeEnv(lib, file string) []string {
	return []string{"LD_PRELOAD=" + lib, "FAKETIME_TIMESTAMP_FILE=" + file, "FAKETIME_NO_CACHE=1", "FAKETIME_DONT_FAKE_MONOTONIC=1"}
}

// WriteShift stores d (nanoseconds, little-endian int64) where the
// clockshift library reads it.
func WriteShift(path string, d time.Duration) error {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(int64(d)))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteAt(b[:], 0)
	return err
}

// clockProbe remembers, per process, how (and whether) redis-server's
// clock can be stepped here.
var clockProbe struct {
	once sync.Once
	mode string // "faketime", "clockshift" or ""
	lib  string
	note string
	dir  string
}

// Probe finds how redis-server's clock can be stepped here. It tries once
// per process, starting a throwaway server under each way, and returns
// the same answer after that.
func Probe() Method {
	clockProbe.once.Do(probeClock)
	return Method{Mode: clockProbe.mode, Lib: clockProbe.lib, Note: clockProbe.note}
}

// probeClock finds how redis-server's clock can be stepped here: it starts
// a throwaway server under libfaketime, and else under the clockshift
// library it compiles, and records the first that runs in clockProbe.
func probeClock() {
	d, err := os.MkdirTemp("", "leasehold-faults-clock-")
	if err != nil {
		clockProbe.note = err.Error()
		return
	}
	_ = os.Chmod(d, 0o755)
	clockProbe.dir = d // kept for the process's life: the library lives here
	try := func(name string, env []string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		s, err := testserver.StartRedis(ctx, testserver.RedisOptions{Dir: d, Env: env})
		if err != nil {
			msg := strings.Join(strings.Fields(err.Error()), " ")
			if len(msg) > 240 {
				msg = msg[:240] + "..."
			}
			return errors.New(msg)
		}
		s.Stop()
		return nil
	}
	var notes []string
	for _, lib := range faketimeLibs {
		if _, err := os.Stat(lib); err != nil {
			continue
		}
		f := filepath.Join(d, "faketime.ts")
		_ = os.WriteFile(f, []byte("+0\n"), 0o644)
		if err := try("faketime", faketimeEnv(lib, f)); err != nil {
			notes = append(notes, "redis-server does not run under libfaketime here ("+err.Error()+")")
			break
		}
		clockProbe.mode, clockProbe.lib = "faketime", lib
		clockProbe.note = "F11 steps the Redis server's clock with libfaketime"
		return
	}
	if len(notes) == 0 {
		notes = append(notes, "libfaketime is not installed (apt-get install -y faketime)")
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		clockProbe.note = strings.Join(append(notes, "and no C compiler (cc) to build the clockshift library"), "; ")
		return
	}
	src, lib := filepath.Join(d, "clockshift.c"), filepath.Join(d, "clockshift.so")
	if err := os.WriteFile(src, []byte(clockshiftC), 0o644); err != nil {
		clockProbe.note = err.Error()
		return
	}
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-O2", "-o", lib, src).CombinedOutput(); err != nil {
		clockProbe.note = strings.Join(append(notes, "and building the clockshift library failed: "+string(out)), "; ")
		return
	}
	f := filepath.Join(d, "clockshift.off")
	if err := WriteShift(f, 0); err != nil {
		clockProbe.note = err.Error()
		return
	}
	if err := try("clockshift", []string{"LD_PRELOAD=" + lib, "CLOCKSHIFT_FILE=" + f}); err != nil {
		clockProbe.note = strings.Join(append(notes, "and redis-server does not run under the clockshift library: "+err.Error()), "; ")
		return
	}
	clockProbe.mode, clockProbe.lib = "clockshift", lib
	clockProbe.note = strings.Join(notes, "; ") + "; F11 steps the Redis server's clock with the harness's clockshift library instead"
}

// CleanupProbe removes the files of Probe, the clockshift library among
// them (call at exit).
func CleanupProbe() {
	if clockProbe.dir != "" {
		_ = os.RemoveAll(clockProbe.dir)
	}
}
