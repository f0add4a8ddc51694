package testserver

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// ErrNotInstalled means a server binary (or the user to run it as) is
// missing; the error names the install script.
var ErrNotInstalled = errors.New("testserver: not installed")

// BinDir is where the install scripts put the binaries they build:
// $LEASEHOLD_BIN, by default ~/.cache/leasehold/bin.
func BinDir() string {
	if d := os.Getenv("LEASEHOLD_BIN"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".cache", "leasehold", "bin")
}

// FindBin finds a server binary: in BinDir, then on PATH, then in the
// folders matched by the glob patterns extra (the highest match of a
// pattern first, so that /usr/lib/postgresql/*/bin finds the newest
// version). The error wraps ErrNotInstalled and names
// scripts/install/<script>.
func FindBin(name, script string, extra ...string) (string, error) {
	if d := BinDir(); d != "" {
		if p := filepath.Join(d, name); isExec(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, pat := range extra {
		for _, d := range globDesc(pat) {
			if p := filepath.Join(d, name); isExec(p) {
				return p, nil
			}
		}
	}
	return "", notInstalled(name, script, append([]string{BinDir(), "PATH"}, extra...))
}

func notInstalled(what, script string, looked []string) error {
	return fmt.Errorf("%w: %s not found (looked in %s): run scripts/install/%s",
		ErrNotInstalled, what, strings.Join(looked, ", "), script)
}

// globDesc returns the folders matching pattern, highest first.
func globDesc(pattern string) []string {
	ms, _ := filepath.Glob(pattern)
	sort.Sort(sort.Reverse(sort.StringSlice(ms)))
	return ms
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort() (int, error) {
	ps, err := FreePorts(1)
	if err != nil {
		return 0, err
	}
	return ps[0], nil
}

// FreePorts returns n distinct loopback TCP ports that were free a moment
// ago (all are held open until every one is found).
func FreePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// RunAs returns the credential of the named user when the test process
// runs as root, and nil otherwise: for servers that refuse to run as root
// (PostgreSQL, PgBouncer). A missing user wraps ErrNotInstalled, naming
// scripts/install/<script>, which creates it.
func RunAs(name, script string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("%w: running as root needs a %s user to run the server as (%v): run scripts/install/%s",
			ErrNotInstalled, name, err, script)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}

// chown gives path to user, if not nil.
func chown(path string, user *syscall.Credential) error {
	if user == nil {
		return nil
	}
	return os.Chown(path, int(user.Uid), int(user.Gid))
}
