package harness_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/harness"
	"github.com/leasehold-go/leasehold/faults/report"
	"github.com/leasehold-go/leasehold/storeurl"
)

// buildLeasehold builds the leasehold command from ../cmd.
func buildLeasehold(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "leasehold")
	// go test puts its own GOROOT/bin first on PATH.
	build := exec.Command("go", "build", "-o", bin, "./leasehold")
	build.Dir = filepath.Join("..", "..", "cmd")
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
	r, err := harness.RunCLI(context.Background(), harness.CLIConfig{
		Backend: &harness.SQLite{}, Open: storeurl.Open, Leasehold: buildLeasehold(t),
		ChildCmd: []string{os.Args[0], "cli-child"}, Env: []string{holderEnv + "=1"},
		Dir: t.TempDir(), TTL: 750 * time.Millisecond, Seed: 42, Log: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(report.CLISummary(r))
	if len(r.Missed)+len(r.Invalid) > 0 || r.AfterGrant != 0 {
		t.Fatalf("%s", report.CLISummary(r))
	}
	for _, c := range check.IDs(check.CLIFaults) {
		if r.Episodes[c] == 0 {
			t.Errorf("no %s episode", c)
		}
	}
	if !strings.Contains(report.CLIMarkdown([]*check.CLIResult{r}, harness.BackendNames()), "| sqlite | 1 |") {
		t.Errorf("the CLI table has no sqlite row:\n%s", report.CLIMarkdown([]*check.CLIResult{r}, harness.BackendNames()))
	}
}
