package clock_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/clock"
)

func TestPatchTime(t *testing.T) {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(goroot)), "src", "time", "time.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, src string
		ok        bool
	}{
		{"this Go's time.go", string(src), true},
		{"Now without the call", "package time\n\nfunc Now() Time {\n\treturn Time{}\n}\n", false},
		{"the call outside Now", "package time\n\nfunc f() {\n\tsec, nsec, mono := runtimeNow()\n}\n\nfunc Now() Time {\n\treturn Time{}\n}\n", false},
		{"no Now", "package time\n", false},
	} {
		got, err := clock.PatchTime(tc.src)
		if !tc.ok {
			if !errors.Is(err, clock.ErrNoPatch) {
				t.Errorf("%s: err %v, want ErrNoPatch", tc.name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		now := got[strings.Index(got, "\nfunc Now() Time {\n"):]
		now = now[:strings.Index(now, "\n}\n")]
		if !strings.Contains(now, "runtimeNow()\n\tsec, nsec = leaseholdWallShift(sec, nsec)\n") || len(got) != len(tc.src)+len("\tsec, nsec = leaseholdWallShift(sec, nsec)\n") {
			t.Errorf("%s: the shift is not right after the wall reading in Now:\n%s", tc.name, now)
		}
	}
}

// TestBuildShifted builds a program with the patched time package and
// steps its wall clock forward, then back: its time.Now follows the offset
// while time.Since (the monotonic clock) does not jump.
func TestBuildShifted(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "probe")
	if err := clock.BuildShifted(context.Background(), "..", "./clock/internal/shiftprobe", bin, filepath.Join(dir, "overlay")); err != nil {
		t.Fatal(err)
	}
	shift := filepath.Join(dir, "shift")
	if err := clock.WriteShift(shift, time.Hour); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), clock.GoShiftEnv+"="+shift)
	in, _ := cmd.StdinPipe()
	outp, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer in.Close()
	out := bufio.NewReader(outp)
	first, _ := out.ReadString('\n')
	if strings.TrimSpace(first) != "1h0m0s" {
		t.Fatalf("the program's wall offset at start: %q, want 1h0m0s", first)
	}
	if err := clock.WriteShift(shift, -time.Hour); err != nil {
		t.Fatal(err)
	}
	_, _ = in.Write([]byte("\n"))
	second, _ := out.ReadString('\n')
	f := strings.Fields(second)
	if len(f) != 3 || f[0] != "-1h0m0s" {
		t.Fatalf("after the step back: %q, want the offset -1h0m0s", second)
	}
	since, err1 := time.ParseDuration(f[1])
	sub, err2 := time.ParseDuration(f[2])
	if err1 != nil || err2 != nil || since < 0 || since > time.Hour || sub < 0 || sub > time.Hour {
		t.Fatalf("time.Since %s and Now().Sub %s across a wall step of -2h: want both the (monotonic) time elapsed", f[1], f[2])
	}
}

// TestObservedUnpatched: a program built as usual (this test) runs with no
// offset, whatever the offset file says.
func TestObservedUnpatched(t *testing.T) {
	if d := clock.Observed(); d != 0 {
		t.Fatalf("Observed in an unpatched program: %s, want 0", d)
	}
}
