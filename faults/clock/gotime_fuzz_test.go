package clock_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold/faults/clock"
)

const shiftLine = "\tsec, nsec = leaseholdWallShift(sec, nsec)\n"

// FuzzPatchTime: PatchTime either refuses with ErrNoPatch or inserts the
// shift once, right after the wall reading, inside func Now, and changes
// nothing else.
func FuzzPatchTime(f *testing.F) {
	f.Add("package time\n\nfunc Now() Time {\n\tsec, nsec, mono := runtimeNow()\n\treturn x\n}\n")
	f.Add("package time\n\nfunc Now() Time {\n\treturn Time{}\n}\n\nfunc f() {\n\tsec, nsec, mono := runtimeNow()\n}\n")
	f.Add("package time\n\nfunc Now() Time {\n\tsec, nsec, mono := runtimeNow()\n\tsec, nsec, mono := runtimeNow()\n}\n")
	f.Add("\nfunc Now() Time {\n\tsec, nsec, mono := runtimeNow()\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, src string) {
		got, err := clock.PatchTime(src)
		if err != nil {
			if !errors.Is(err, clock.ErrNoPatch) || got != "" {
				t.Fatalf("refusal %v with %q, want ErrNoPatch and nothing", err, got)
			}
			if nowCalls(src) == 1 {
				t.Fatalf("refused a source whose func Now has the wall reading once:\n%s", src)
			}
			return
		}
		now := strings.Index(src, "\nfunc Now() Time {\n")
		if now < 0 {
			t.Fatalf("patched a source with no func Now")
		}
		k := strings.Index(got[now:], "\tsec, nsec, mono := runtimeNow()\n"+shiftLine)
		if k < 0 {
			t.Fatalf("no shift right after the wall reading in func Now:\n%s", got)
		}
		j := now + k + len("\tsec, nsec, mono := runtimeNow()\n")
		if got[:j]+got[j+len(shiftLine):] != src {
			t.Fatalf("the patch changed more than one inserted line:\n%s", got)
		}
		if end := strings.Index(src[now:], "\n}\n"); end >= 0 && now+end+1 < j {
			t.Fatalf("the shift is after the end of func Now")
		}
	})
}

// nowCalls counts, line by line, the wall readings in the body of the
// first func Now (not on the first line), up to its closing brace: -1
// when there is no such func.
func nowCalls(src string) int {
	lines := strings.Split(src, "\n")
	for i := 1; i < len(lines); i++ {
		if lines[i] != "func Now() Time {" || i+1 == len(lines) {
			continue
		}
		n := 0
		for _, l := range lines[i+1 : len(lines)-1] { // a line ends with a newline
			if l == "}" {
				break
			}
			if l == "\tsec, nsec, mono := runtimeNow()" {
				n++
			}
		}
		return n
	}
	return -1
}
