package clientgo_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/postgres"
)

// Environment of TestChildCandidate: the store's spec (see openStore) and
// the file it logs its terms to.
const (
	childStoreEnv = "LEASEHOLD_CLIENTGO_CHILD_STORE"
	childLogEnv   = "LEASEHOLD_CLIENTGO_CHILD_LOG"
)

// TestChildCandidate is the second process of the two-process tests: a
// candidate that campaigns, leads and renews until it is killed.
func TestChildCandidate(t *testing.T) {
	spec := os.Getenv(childStoreEnv)
	if spec == "" {
		t.Log("runs only as the child of the two-process tests")
		return
	}
	lg := openLeadLog(t, os.Getenv(childLogEnv), "child")
	candidate(context.Background(), t, openStore(t, spec), lg, nil)
	t.Fatal("the child's elector returned") // it leads until killed
}

// Two candidates, each in a process of its own, elect with client-go's own
// elector over the store at spec. The child leads; the parent campaigns
// and does not lead while the child lives; the child is killed with
// SIGKILL, and the parent leads once the child's lease expired, with a
// higher token, never before the child's last holder-side deadline.
func testKilledLeader(t *testing.T, spec string) {
	dir := t.TempDir()
	childLog, parentLog := filepath.Join(dir, "child.log"), filepath.Join(dir, "parent.log")
	child := exec.Command(os.Args[0], "-test.run", "^TestChildCandidate$", "-test.count=1")
	child.Env = append(os.Environ(), childStoreEnv+"="+spec, childLogEnv+"="+childLog)
	child.Stdout, child.Stderr = os.Stderr, os.Stderr
	if err := child.Start(); err != nil {
		t.Fatalf("starting the child candidate: %v", err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	waitLead(t, childLog)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	led := make(chan uint64, 1)
	st := openStore(t, spec)
	lg := openLeadLog(t, parentLog, "parent")
	go func() {
		defer close(done)
		candidate(ctx, t, st, lg, led)
	}()
	defer func() { cancel(); <-done }()
	time.Sleep(3 * leaseDuration) // the parent campaigns while the child leads
	select {
	case tok := <-led:
		t.Fatalf("the parent led (token %d) while the child lived", tok)
	default:
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatalf("killing the child: %v", err)
	}
	select {
	case <-led:
	case <-time.After(limit):
		t.Fatalf("the parent did not lead within %s of the child's death", limit)
	}
	terms := readTerms(t, childLog, parentLog)
	checkTerms(t, terms)
	if len(terms) < 2 || terms[0].id != "child" || terms[len(terms)-1].id != "parent" {
		t.Errorf("terms %+v: want the child's, then the parent's", terms)
	}
}

// waitLead waits until the log at path has a LEAD line.
func waitLead(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(path)
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "LEAD ") {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the child did not lead within %s", limit)
}

func TestKilledLeaderSQLite(t *testing.T) {
	testKilledLeader(t, filepath.Join(t.TempDir(), "leases.db"))
}

func TestKilledLeaderRedis(t *testing.T) {
	r := testserver.NewRedis(t, testserver.RedisOptions{})
	testKilledLeader(t, "redis://"+r.Addr())
}

func TestKilledLeaderPostgres(t *testing.T) {
	pg := testserver.NewPostgres(t, testserver.PostgresOptions{})
	u := pg.ConnString()
	if err := postgres.MigrateURL(context.Background(), u); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	testKilledLeader(t, u)
}
