package storeurl

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmePath is the repository's README, from this package's folder.
const readmePath = "../README.md"

// readREADME returns the README's text.
func readREADME(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestREADMEInstall checks that the README has a go get line for the root
// module and for the module of every store's package (of its adapters, for
// a store used through one), and the go install line of the CLI.
func TestREADMEInstall(t *testing.T) {
	readme := readREADME(t)
	got := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^go get (\S+)`).FindAllStringSubmatch(readme, -1) {
		got[m[1]] = true
	}
	want := map[string]bool{modulePath: true}
	for _, k := range Stores() {
		dirs := k.Adapters
		if len(dirs) == 0 {
			dirs = []string{k.Package}
		}
		for _, d := range dirs {
			if m := moduleOf(t, d); m != "." {
				want[modulePath+"/"+m] = true
			}
		}
	}
	for w := range want {
		if !got[w] {
			t.Errorf("README.md has no line %q", "go get "+w)
		}
	}
	if install := "go install " + modulePath + "/cmd/leasehold@latest\n"; !strings.Contains(readme, "\n"+install) {
		t.Errorf("README.md has no line %q", install)
	}
}

// TestREADMELayout checks that the README's layout section names every
// top-level folder of the repository that holds Go code, and that every
// store folder with a README.md of its own is linked from the README.
func TestREADMELayout(t *testing.T) {
	readme := readREADME(t)
	i := strings.Index(readme, "\n## Layout\n")
	if i < 0 {
		t.Fatal("README.md has no ## Layout section")
	}
	layout := readme[i:]
	if j := strings.Index(layout[1:], "\n## "); j >= 0 {
		layout = layout[:j+1]
	}
	entries, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "testdata" || !hasGo(t, filepath.Join("..", e.Name())) {
			continue
		}
		if !strings.Contains(layout, "`"+e.Name()+"/") {
			t.Errorf("README.md's layout section does not name %s/", e.Name())
		}
	}
	for _, k := range Stores() {
		for _, d := range append([]string{k.Package}, k.Adapters...) {
			if _, err := os.Stat(filepath.Join("..", d, "README.md")); err == nil && !strings.Contains(readme, "("+d+"/README.md)") {
				t.Errorf("README.md does not link %s/README.md", d)
			}
		}
	}
}

// hasGo reports whether the tree at dir holds a .go file.
func hasGo(t *testing.T, dir string) bool {
	t.Helper()
	found := false
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			found = true
			return fs.SkipAll
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
