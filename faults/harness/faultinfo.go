package harness

import (
	"context"
	"os/exec"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
)

// FaultNoter is a backend with a caveat on a fault class that applies to
// it only in part (kube: F5), for the report.
type FaultNoter interface {
	FaultNote(id string) string
}

// typeOnly are the fault classes whose applies reads nothing but the
// backend's type (a capability interface), so that it can be asked of a
// backend that is not running.
var typeOnly = []string{check.F8, check.F9m, check.F9k, check.F10}

// StaticFault says what the harness knows of fault class id on the store
// called store without starting it: why the class never applies to the
// store (notRun, for the classes decided by the backend's type alone), and
// the backend's caveat on the class (note, FaultNoter). Both are empty
// when the harness cannot tell: that depends on the running store.
func StaticFault(store, id string) (notRun, note string, err error) {
	b, err := NewBackend(store)
	if err != nil {
		return "", "", err
	}
	if fn, ok := b.(FaultNoter); ok {
		note = fn.FaultNote(id)
	}
	if !slices.Contains(typeOnly, id) {
		return "", note, nil
	}
	f, err := faultByID(id)
	if err != nil {
		return "", "", err
	}
	if ok, why := f.applies(&harness{cfg: RunConfig{Backend: b}}); !ok {
		return why, note, nil
	}
	return "", note, nil
}

// buildCommit is the commit the running binary was built from (its VCS
// stamp, "+dirty" if the tree was modified), or else the commit checked
// out where it runs (git rev-parse: builds here run with -buildvcs=false),
// or "" if neither says.
func buildCommit(ctx context.Context) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, dirty string
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision":
				rev = s.Value[:min(len(s.Value), 7)]
			case s.Key == "vcs.modified" && s.Value == "true":
				dirty = "+dirty"
			}
		}
		if rev != "" {
			return rev + dirty
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "--short=7", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
