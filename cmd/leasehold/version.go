package main

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// version prints what the binary was built from: the module version that
// `go install ...@vX` stamps (or "(devel)" for a build in a checkout), the
// revision and time the Go toolchain recorded from version control, and the
// Go version.
func (a *app) version(args []string) int {
	fs := newFlags("version")
	if code, ok := a.parse(fs, "version", args); !ok {
		return code
	}
	if err := noArgs(fs); err != nil {
		return a.fail("version", err)
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		fmt.Fprintln(a.stdout, "leasehold (no build information)")
		return exitOK
	}
	fmt.Fprintln(a.stdout, versionLine(bi))
	return exitOK
}

// versionLine is the one line leasehold version prints.
func versionLine(bi *debug.BuildInfo) string {
	parts := []string{"leasehold", bi.Main.Version}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if settings["vcs.modified"] == "true" {
			rev += "+modified"
		}
		parts = append(parts, rev)
	}
	if t := settings["vcs.time"]; t != "" {
		parts = append(parts, t)
	}
	return strings.Join(append(parts, bi.GoVersion), " ")
}
