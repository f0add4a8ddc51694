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
	asJSON := jsonFlag(fs)
	if _, code, ok := a.parse(fs, "version", args); !ok {
		return code
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = &debug.BuildInfo{Main: debug.Module{Version: "(no build information)"}}
	}
	v := buildVersion(bi)
	if *asJSON {
		return a.printJSON(v)
	}
	fmt.Fprintln(a.stdout, v.line())
	return exitOK
}

// versionJSON is what leasehold version prints, as version --json prints it.
type versionJSON struct {
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"` // 12 hex digits
	Modified bool   `json:"modified,omitempty"` // built from a tree with changes
	Time     string `json:"time,omitempty"`     // the revision's time
	Go       string `json:"go"`
}

// buildVersion reads bi's version, revision, time and Go version.
func buildVersion(bi *debug.BuildInfo) versionJSON {
	v := versionJSON{Version: bi.Main.Version, Go: bi.GoVersion}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value[:min(len(s.Value), 12)]
		case "vcs.modified":
			v.Modified = s.Value == "true"
		case "vcs.time":
			v.Time = s.Value
		}
	}
	return v
}

// line is the one line leasehold version prints.
func (v versionJSON) line() string {
	parts := []string{"leasehold", v.Version}
	if v.Revision != "" {
		rev := v.Revision
		if v.Modified {
			rev += "+modified"
		}
		parts = append(parts, rev)
	}
	if v.Time != "" {
		parts = append(parts, v.Time)
	}
	if v.Go != "" {
		parts = append(parts, v.Go)
	}
	return strings.Join(parts, " ")
}
