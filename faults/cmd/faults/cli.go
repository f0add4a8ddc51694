package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/harness"
	"github.com/leasehold-go/leasehold/faults/report"
)

// cliCmd runs the CLI workload once: faults cli -store NAME [-seconds S]
// [-ttl D] [-seed N] [-leasehold PATH] [-dir D] [-keep].
func cliCmd(ctx context.Context, args []string) (int, error) {
	fs := flag.NewFlagSet("cli", flag.ExitOnError)
	store := fs.String("store", "sqlite", "store: "+storeNames())
	seconds := fs.Int("seconds", 0, "run the fault schedule for at least this long (0: one pass)")
	seed := fs.Uint64("seed", uint64(time.Now().UnixNano()%100000), "seed")
	ttl := fs.Duration("ttl", time.Second, "lease TTL")
	lh := fs.String("leasehold", "", "the leasehold binary (default: built from ../cmd)")
	dir := fs.String("dir", "", "run directory (default: a temporary one)")
	keep := fs.Bool("keep", false, "keep the run directory")
	_ = fs.Parse(args)
	bin, cleanup, err := leaseholdBinary(*lh)
	if err != nil {
		return 0, err
	}
	defer cleanup()
	d := *dir
	if d == "" {
		if d, err = os.MkdirTemp("", "leasehold-faults-cli-"); err != nil {
			return 0, err
		}
		if !*keep {
			defer os.RemoveAll(d)
		}
	}
	r, err := runCLI(ctx, *store, *seed, *ttl, time.Duration(*seconds)*time.Second, bin, filepath.Clean(d))
	if err != nil {
		return 0, err
	}
	fmt.Println(report.CLISummary(r))
	if len(r.Missed) > 0 || len(r.Invalid) > 0 {
		return 1, nil
	}
	return 0, nil
}

func runCLI(ctx context.Context, store string, seed uint64, ttl, d time.Duration, bin, dir string) (*check.CLIResult, error) {
	b, err := newBackend(store, bin)
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return harness.RunCLI(ctx, harness.CLIConfig{
		Backend: b, Open: open, Leasehold: bin, ChildCmd: []string{exe, "cli-child"}, Dir: dir,
		TTL: ttl, Duration: d, Seed: seed,
		Log: func(format string, a ...any) { logf("[%s cli %d] "+format, append([]any{store, seed}, a...)...) },
	})
}

// newBackend returns the backend called name; a remote one (a leasehold
// server in front of another store) runs the leasehold binary lh.
func newBackend(name, lh string) (harness.Backend, error) {
	b, err := harness.NewBackend(name)
	if r, ok := b.(*harness.Remote); ok {
		r.Leasehold = lh
	}
	return b, err
}

// needsLeasehold reports whether a store of names runs the leasehold
// binary (a remote one).
func needsLeasehold(names []string) bool {
	for _, n := range names {
		if b, _ := harness.NewBackend(strings.TrimSpace(n)); b != nil {
			if _, ok := b.(*harness.Remote); ok {
				return true
			}
		}
	}
	return false
}

// leaseholdBinary returns the leasehold binary to run: path, or one built
// from the cmd module found above the working directory.
func leaseholdBinary(path string) (string, func(), error) {
	if path != "" {
		return path, func() {}, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", nil, err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "cmd", "leasehold", "main.go")); err == nil {
			tmp, err := os.MkdirTemp("", "leasehold-bin-")
			if err != nil {
				return "", nil, err
			}
			bin := filepath.Join(tmp, "leasehold")
			build := exec.Command("go", "build", "-o", bin, "./leasehold")
			build.Dir = filepath.Join(d, "cmd")
			build.Env = append(os.Environ(), "GOWORK=off")
			if out, err := build.CombinedOutput(); err != nil {
				os.RemoveAll(tmp)
				return "", nil, fmt.Errorf("build leasehold in %s: %v\n%s", build.Dir, err, out)
			}
			return bin, func() { os.RemoveAll(tmp) }, nil
		}
		if filepath.Dir(d) == d {
			return "", nil, errors.New("no -leasehold binary given and no cmd/leasehold above the working directory to build one from")
		}
	}
}
