package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/leasehold-go/leasehold/faults/clock"
)

// envFaultsSrc names the faults module's folder, whose source the holder
// of F17 is built from; unset, it is looked for above the working
// directory.
const envFaultsSrc = "LEASEHOLD_FAULTS_SRC"

// faultsModule is the module path the source folder must declare.
const faultsModule = "module github.com/leasehold-go/leasehold/faults\n"

// wallHolder builds this command with the patched time package
// (clock.BuildShifted) into a temporary folder and returns how to start
// it in holder mode, for F17, and what removes it. The build takes a while
// the first time (every package that uses time is compiled again) and
// comes from the build cache after that.
func wallHolder(ctx context.Context) ([]string, func(), error) {
	src, err := faultsSrc()
	if err != nil {
		return nil, nil, err
	}
	tmp, err := os.MkdirTemp("", "leasehold-wallholder-")
	if err != nil {
		return nil, nil, err
	}
	_ = os.Chmod(tmp, 0o755)
	bin := filepath.Join(tmp, "faults-wallclock")
	logf("building the holder with the patched time package (F17) from %s", src)
	if err := clock.BuildShifted(ctx, src, "./cmd/faults", bin, filepath.Join(tmp, "overlay")); err != nil {
		os.RemoveAll(tmp)
		return nil, nil, err
	}
	return []string{bin, "holder"}, func() { os.RemoveAll(tmp) }, nil
}

// faultsSrc returns the faults module's folder: $LEASEHOLD_FAULTS_SRC, or
// the first folder above the working directory that is it or holds it as
// faults/.
func faultsSrc() (string, error) {
	isFaults := func(d string) bool {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		return err == nil && strings.HasPrefix(string(b), faultsModule)
	}
	if d := os.Getenv(envFaultsSrc); d != "" {
		if !isFaults(d) {
			return "", fmt.Errorf("$%s=%s is not the faults module's folder", envFaultsSrc, d)
		}
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		for _, c := range []string{d, filepath.Join(d, "faults")} {
			if isFaults(c) {
				return c, nil
			}
		}
		if filepath.Dir(d) == d {
			return "", errors.New("F17 needs the faults module's source to build its holder: run from the repository, or set $" + envFaultsSrc)
		}
	}
}
