package testserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPostgresLongDir starts a cluster in a folder whose path is 150 bytes
// long: the socket's path would pass the 107-byte limit of a Unix socket
// address, which must not stop the server (the long fault run's
// per-store folders are that long).
func TestPostgresLongDir(t *testing.T) {
	long := longDir(t)
	pg := NewPostgres(t, PostgresOptions{Dir: long})
	if err := pgSession(t.Context(), pg.Addr(), "postgres", "postgres", "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	sock := pg.SocketDir
	if st, err := os.Stat(sock); err != nil || !st.IsDir() {
		t.Fatalf("socket folder %q: %v", sock, err)
	}
	pg.Stop()
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket folder %q left behind after Stop: %v", sock, err)
	}
}

// TestMariaDBLongDir starts MariaDB in a folder whose path is 150 bytes
// long, which would put its socket past a Unix socket address's limit.
func TestMariaDBLongDir(t *testing.T) {
	long := longDir(t)
	m := NewMariaDB(t, MariaDBOptions{Dir: long})
	sock := m.sockDir
	m.Stop()
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket folder %q left behind after Stop: %v", sock, err)
	}
}

// longDir makes a folder whose path is at least 150 bytes long.
func longDir(t *testing.T) string {
	t.Helper()
	parent := t.TempDir()
	long := filepath.Join(parent, strings.Repeat("d", max(150-len(parent)-1, 1)))
	if err := os.MkdirAll(long, 0o755); err != nil {
		t.Fatal(err)
	}
	if len(long) < 150 {
		t.Fatalf("folder %q is %d bytes, want at least 150", long, len(long))
	}
	return long
}
