package sqlite

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/leasetest"
)

// TestConformance runs the shared suite. Every Open is a new handle (its
// own *sql.DB and connections) on the same file; Restart SIGKILLs another
// process in the middle of a run of write transactions on the file, the
// nearest a file store has to a server crash.
func TestConformance(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "conformance.db")
	restarts := 0
	leasetest.Run(t, leasetest.Config{
		// Every write is fsync'd: on a shared disk one can take longer
		// than the suite's 300 ms default TTL, which would test the disk.
		ShortTTL: time.Second,
		Open: func(t testing.TB) leasehold.Store {
			s, err := Open(ctxT(t), path, nil)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			return s
		},
		Restart: func(t testing.TB) {
			restarts++
			crashChild(t, path, filepath.Join(dir, "restart.log"+string(rune('0'+restarts%10))), 5)
		},
	})
}

// crashChild starts a churn child on path and SIGKILLs it once it has
// logged at least n grants.
func crashChild(t testing.TB, path, log string, n int) {
	t.Helper()
	c := startChild(t, "", "churn", map[string]string{"DB": path, "LOG": log, "KEYS": "3"}, nil)
	deadline := time.Now().Add(time.Minute)
	for countLines(log) < n {
		select {
		case err := <-c.done:
			t.Fatalf("churn child exited early: %v\n%s", err, c.stderr)
		case <-time.After(2 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			break
		}
	}
	c.kill()
	if countLines(log) < n {
		t.Fatalf("churn child logged %d grants in a minute, want %d\n%s", countLines(log), n, c.stderr)
	}
}
