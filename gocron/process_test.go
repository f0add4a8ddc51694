package gocron_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	gocronv2 "github.com/go-co-op/gocron/v2"

	lhgocron "github.com/leasehold-go/leasehold/gocron"
)

// childEnv names the sqlite file of the scheduler TestChildScheduler runs.
const childEnv = "LEASEHOLD_GOCRON_CHILD_DB"

// processTTL is the TTL of the lock in the two-process test: the key of a
// killed holder is free this long after its last renewal.
const processTTL = time.Second

// lockJob adds to s the job of the two-process test: locked by its name
// (no tick: a holder keeps the next ticks out until its lease ends), run
// every second, calling run under the lease.
func lockJob(t testing.TB, s gocronv2.Scheduler, lk *lhgocron.Locker, run func(ctx context.Context) error) {
	t.Helper()
	if _, err := s.NewJob(everySecond(), gocronv2.NewTask(lk.Guard(run)), gocronv2.WithName("report"),
		gocronv2.WithSingletonMode(gocronv2.LimitModeReschedule)); err != nil {
		t.Fatalf("NewJob: %v", err)
	}
}

// TestChildScheduler is the second process of
// TestKilledHolderLetsTheOtherRun: its scheduler's job prints RUNNING and
// works until the process is killed.
func TestChildScheduler(t *testing.T) {
	path := os.Getenv(childEnv)
	if path == "" {
		t.Log("runs only as the child of TestKilledHolderLetsTheOtherRun")
		return
	}
	c, _ := newClient(t, path, nil)
	lk, err := lhgocron.NewLocker(c, &lhgocron.LockerOptions{TTL: processTTL})
	if err != nil {
		t.Fatal(err)
	}
	s := newScheduler(t, gocronv2.WithDistributedLocker(lk))
	lockJob(t, s, lk, func(ctx context.Context) error {
		fmt.Printf("RUNNING %d\n", lhgocron.LeaseFrom(ctx).Token())
		<-ctx.Done() // a long job: it ends only when the process is killed
		return ctx.Err()
	})
	s.Start()
	select {} // killed by the parent
}

// Two scheduler processes run the same job every second, locked by its
// name. The child holds the lock and works; the parent's scheduler never
// runs the job while the child lives; once the child is killed in the
// middle of the job, the parent runs it on a later tick (the lease
// expires at its TTL).
func TestKilledHolderLetsTheOtherRun(t *testing.T) {
	path := dbPath(t)
	child := exec.Command(os.Args[0], "-test.run", "^TestChildScheduler$", "-test.count=1", "-test.v")
	child.Env = append(os.Environ(), childEnv+"="+path)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatalf("starting the child scheduler: %v", err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	running := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "RUNNING") {
				running <- sc.Text()
				break
			}
		}
		for sc.Scan() { // drain, so the child never blocks on its output
		}
	}()
	var childRun string
	select {
	case childRun = <-running:
	case <-time.After(limit):
		t.Fatal("the child's job did not start")
	}

	c, _ := newClient(t, path, nil)
	lk, err := lhgocron.NewLocker(c, &lhgocron.LockerOptions{TTL: processTTL})
	if err != nil {
		t.Fatal(err)
	}
	runs := make(chan uint64, 100)
	s := newScheduler(t, gocronv2.WithDistributedLocker(lk))
	lockJob(t, s, lk, func(ctx context.Context) error {
		runs <- lhgocron.LeaseFrom(ctx).Token()
		return nil
	})
	s.Start()
	time.Sleep(3 * processTTL) // the parent's ticks try the lock the child holds
	select {
	case tok := <-runs:
		t.Fatalf("the parent ran the job (token %d) while the child held it (%s)", tok, childRun)
	default:
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatalf("killing the child: %v", err)
	}
	select {
	case tok := <-runs:
		var childTok uint64
		_, _ = fmt.Sscanf(childRun, "RUNNING %d", &childTok)
		if tok <= childTok {
			t.Errorf("the parent's run has token %d, not above the killed child's %d", tok, childTok)
		}
	case <-time.After(limit):
		t.Fatalf("the parent did not run the job within %s of the child's death", limit)
	}
}
