package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/leasehold-go/leasehold/internal/testserver"
)

// testEnv is what every test of the package shares: the worker binary,
// built once, and a PostgreSQL server (each run makes its own schema).
type testEnv struct {
	binary string
	pg     *testserver.Postgres
}

// env is set by TestMain before any test runs and not changed after.
var env testEnv

type mainRun struct{ m *testing.M }

// Run builds the binary and starts the server, runs the tests, then stops
// the server and removes the binary, so that goleak checks for leaks after
// both are gone.
func (r mainRun) Run() int {
	dir, err := os.MkdirTemp("", "workerpool-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	env.binary = filepath.Join(dir, "workerpool")
	if err := build(env.binary); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	pg, err := testserver.StartPostgres(context.Background(), testserver.PostgresOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "the workerpool tests need a real PostgreSQL server:", err)
		return 1
	}
	defer pg.Stop()
	env.pg = pg
	return r.m.Run()
}

// build compiles this module's command to binary, with -race when the
// tests run with it.
func build(binary string) error {
	// go test puts its own GOROOT/bin first on PATH.
	args := []string{"build", "-o", binary}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build of the workerpool command failed: %v\n%s", err, out)
	}
	return nil
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(mainRun{m})
}
