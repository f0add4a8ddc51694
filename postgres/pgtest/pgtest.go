// Package pgtest is what is left of the PostgreSQL test kit, which moved to
// internal/testserver (module github.com/leasehold-go/leasehold/internal/testserver):
// BinDir, which the fault harness still uses. Delete this package once
// faults calls testserver.PostgresBinDir.
package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// BinDir returns the folder holding the PostgreSQL server binaries (initdb
// and postgres): $LEASEHOLD_BIN, ~/.cache/leasehold/bin, the Debian
// folders (version 15, then the newest) or the folder of initdb on PATH.
//
// Deprecated: use testserver.PostgresBinDir.
func BinDir() (string, error) {
	var dirs []string
	if d := os.Getenv("LEASEHOLD_BIN"); d != "" {
		dirs = append(dirs, d)
	}
	if h, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(h, ".cache", "leasehold", "bin"))
	}
	dirs = append(dirs, "/usr/lib/postgresql/15/bin")
	more, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Sort(sort.Reverse(sort.StringSlice(more)))
	dirs = append(dirs, more...)
	if p, err := exec.LookPath("initdb"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", fmt.Errorf("pgtest: PostgreSQL server binaries (initdb, postgres) not found in %s; run scripts/install/postgres.sh", strings.Join(dirs, ", "))
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}
