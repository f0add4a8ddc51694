// Command modproxy writes Go modules from a source tree as a module proxy's
// files (the layout GOPROXY=file:///DIR reads: PATH/@v/list, VERSION.info,
// VERSION.mod and VERSION.zip), so a release can be installed from a folder
// before it is tagged. scripts/release-rehearse uses it.
//
//	go run . -out DIR -version vX.Y.Z MODULE_DIR...
//
// Each MODULE_DIR holds a go.mod; its zip is made as the go command makes one
// from a tagged commit (golang.org/x/mod/zip: nested modules, vendor folders
// and files the go command would refuse are left out or reported).
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

func main() {
	out := flag.String("out", "", "the proxy folder to write into (created if missing)")
	version := flag.String("version", "", "the version every module is written at (vX.Y.Z)")
	flag.Parse()
	if *out == "" || *version == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: modproxy -out DIR -version vX.Y.Z MODULE_DIR...")
		os.Exit(2)
	}
	for _, dir := range flag.Args() {
		if err := write(*out, *version, dir); err != nil {
			fmt.Fprintf(os.Stderr, "modproxy: %s: %v\n", dir, err)
			os.Exit(1)
		}
	}
}

// write adds the module in dir at version to the proxy folder out.
func write(out, version, dir string) error {
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return err
	}
	path := modfile.ModulePath(gomod)
	if path == "" {
		return errors.New("go.mod names no module")
	}
	mv := module.Version{Path: path, Version: version}
	if err := module.Check(path, version); err != nil {
		return err
	}
	escPath, err := module.EscapePath(path)
	if err != nil {
		return err
	}
	vdir := filepath.Join(out, filepath.FromSlash(escPath), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return err
	}
	if err := writeZip(filepath.Join(vdir, version+".zip"), mv, dir); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(vdir, version+".mod"), gomod, 0o644); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(vdir, version+".info"), info, 0o644); err != nil {
		return err
	}
	return addToList(filepath.Join(vdir, "list"), version)
}

// writeZip writes the module zip of dir to name.
func writeZip(name string, mv module.Version, dir string) (err error) {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	return modzip.CreateFromDir(f, mv, dir)
}

// addToList appends version to the list file unless it is there already.
func addToList(name, version string) error {
	old, err := os.ReadFile(name)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, line := range splitLines(string(old)) {
		if line == version {
			return nil
		}
	}
	return os.WriteFile(name, append(old, version+"\n"...), 0o644)
}

// splitLines returns the non-empty lines of s.
func splitLines(s string) []string {
	var lines []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '\n' {
			if i > start {
				lines = append(lines, s[start:i])
			}
			start = i + 1
		}
	}
	return lines
}
