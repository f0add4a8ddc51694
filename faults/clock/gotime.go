package clock

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// A Go program's wall clock, alone (F17): the holder's wall clock stepped
// while its monotonic clock runs on, which is what an NTP step or an
// operator's date command does to a process. Stepping the host's clock
// would move every process's, and an LD_PRELOAD library (clockshift) does
// not reach a Go program, which reads the clock through the vDSO itself.
// So BuildShifted builds the program with go build -overlay replacing the
// standard library's time.go with a copy whose Now passes the wall reading
// (never the monotonic one) through an offset, and adding a file to the
// time package (gotime_shift.go.txt) that maps the offset from the file
// named by $LEASEHOLD_GO_CLOCKSHIFT_FILE at start. The offset file has
// clockshift's format, so WriteShift steps it; the program sees a step on
// its next time.Now. Observed tells a program how far its time.Now is from
// the kernel's real time, which proves (or disproves) the patch applied.

// GoShiftEnv names the offset file a program built by BuildShifted reads.
const GoShiftEnv = "LEASEHOLD_GO_CLOCKSHIFT_FILE"

//go:embed gotime_shift.go.txt
var goTimeShift string

// nowCall is the line of time.Now (Go 1.21 to at least 1.26) after which
// the patch shifts the wall reading.
const nowCall = "\tsec, nsec, mono := runtimeNow()\n"

// ErrNoPatch is returned by PatchTime when the time package's source does
// not have the line the patch goes after: a Go release the patch does not
// know.
var ErrNoPatch = errors.New("clock: time.Now's source is not the one the wall-clock patch knows")

// PatchTime returns time.go's source with the wall reading of Now passed
// through the offset: a line after nowCall, which must be a line of its
// own, once, in the body of func Now.
func PatchTime(src string) (string, error) {
	i := strings.Index(src, "\nfunc Now() Time {\n")
	if i < 0 {
		return "", ErrNoPatch
	}
	body := src[i:]
	if end := strings.Index(body, "\n}\n"); end >= 0 {
		body = body[:end+1] // with the newline of its last line
	}
	line := "\n" + nowCall // a whole line of its own
	if strings.Count(body, line) != 1 {
		return "", ErrNoPatch
	}
	j := i + strings.Index(body, line) + len(line)
	return src[:j] + "\tsec, nsec = leaseholdWallShift(sec, nsec)\n" + src[j:], nil
}

// BuildShifted builds the package pkg of the module in dir (GOWORK=off)
// into out, with the time package patched so that the wall clock of the
// program follows the offset file named by GoShiftEnv. work holds the
// overlay's files.
func BuildShifted(ctx context.Context, dir, pkg, out, work string) error {
	// GOROOT as the build in dir sees it: its go line may switch the
	// toolchain, and the overlay must patch that toolchain's time package.
	gr := exec.CommandContext(ctx, "go", "env", "GOROOT")
	gr.Dir = dir
	gr.Env = append(os.Environ(), "GOWORK=off")
	goroot, err := gr.Output()
	if err != nil {
		return fmt.Errorf("clock: go env GOROOT: %w", err)
	}
	tdir := filepath.Join(strings.TrimSpace(string(goroot)), "src", "time")
	src, err := os.ReadFile(filepath.Join(tdir, "time.go"))
	if err != nil {
		return err
	}
	patched, err := PatchTime(string(src))
	if err != nil {
		return fmt.Errorf("%w (%s)", err, filepath.Join(tdir, "time.go"))
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	files := map[string]string{
		filepath.Join(tdir, "time.go"):                    patched,
		filepath.Join(tdir, "zz_leasehold_clockshift.go"): goTimeShift,
	}
	replace := map[string]string{}
	for target, text := range files {
		p := filepath.Join(work, filepath.Base(target)+".txt")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return err
		}
		replace[target] = p
	}
	ov, _ := json.Marshal(map[string]any{"Replace": replace})
	ovPath := filepath.Join(work, "overlay.json")
	if err := os.WriteFile(ovPath, ov, 0o644); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-overlay", ovPath, "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("clock: go build -overlay (patched time package) %s in %s: %v\n%s", pkg, dir, err, b)
	}
	return nil
}

// Observed returns how far this process's time.Now is from the kernel's
// real time (gettimeofday, which no patch of the time package moves),
// rounded to the millisecond: the offset a program built by BuildShifted
// is running with, and 0 for any other.
func Observed() time.Duration {
	var tv syscall.Timeval
	if err := syscall.Gettimeofday(&tv); err != nil {
		return 0
	}
	now := time.Now()
	real := time.Unix(tv.Unix())
	return now.Sub(real).Round(time.Millisecond)
}
