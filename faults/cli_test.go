package faults_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults"
	"github.com/leasehold-go/leasehold/storeurl"
)

// cliHistory is a synthetic CLI workload history: command a (token 1)
// writes at the given times, command b (token 2) starts at bStart.
func cliHistory(aWrites []int64, bStart int64) []faults.Event {
	evs := []faults.Event{{T0: 1, T: 1, Src: "c0.1", Kind: faults.EvStart, Token: 1}}
	for _, w := range aWrites {
		evs = append(evs, faults.Event{T0: w, T: w + 1, Src: "c0.1", Kind: faults.EvFWrite, Token: 1})
	}
	evs = append(evs, faults.Event{T0: bStart, T: bStart, Src: "c1.1", Kind: faults.EvStart, Token: 2},
		faults.Event{T0: bStart + 5, T: bStart + 6, Src: "c1.1", Kind: faults.EvFWrite, Token: 2})
	faults.SortHistory(evs)
	return evs
}

// The checker counts a write issued after the next holder's start, and
// only that.
func TestCheckCLI(t *testing.T) {
	var ok faults.CLIResult
	faults.CheckCLI(cliHistory([]int64{10, 20, 30}, 100), &ok)
	if ok.AfterGrant != 0 || ok.Commands != 2 || ok.Writes != 4 || ok.Margin != 70 {
		t.Errorf("clean history: %+v", ok)
	}
	var bad faults.CLIResult
	faults.CheckCLI(cliHistory([]int64{10, 20, 130, 150}, 100), &bad)
	if bad.AfterGrant != 2 || bad.Worst != 50 {
		t.Errorf("writes after the grant: %+v, want 2, the latest 50 ns late", bad)
	}
}

// buildLeasehold builds the leasehold command from ../cmd.
func buildLeasehold(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "leasehold")
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	build := exec.Command(goBin, "build", "-o", bin, "./leasehold")
	build.Dir = filepath.Join("..", "cmd")
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build leasehold: %v\n%s", err, out)
	}
	return bin
}

// TestCLIEmbedded runs the CLI workload end to end on the embedded store:
// every fault must stop its target's command, and no command may write
// after the next holder's grant.
func TestCLIEmbedded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs leasehold processes for about 10 s")
	}
	r, err := faults.RunCLI(context.Background(), faults.CLIConfig{
		Backend: &faults.SQLite{}, Open: storeurl.Open, Leasehold: buildLeasehold(t),
		ChildCmd: []string{os.Args[0], "cli-child"}, Env: []string{holderEnv + "=1"},
		Dir: t.TempDir(), TTL: 750 * time.Millisecond, Seed: 42, Log: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(faults.CLISummary(r))
	if len(r.Missed)+len(r.Invalid) > 0 || r.AfterGrant != 0 {
		t.Fatalf("%s", faults.CLISummary(r))
	}
	for _, c := range faults.CLIFaults {
		if r.Episodes[c] == 0 {
			t.Errorf("no %s episode", c)
		}
	}
	if !strings.Contains(faults.CLIMarkdown([]*faults.CLIResult{r}), "| sqlite | 1 |") {
		t.Errorf("the CLI table has no sqlite row:\n%s", faults.CLIMarkdown([]*faults.CLIResult{r}))
	}
}
