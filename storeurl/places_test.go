package storeurl

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The places a store lives in, outside its own package, checked against the
// store table: adding a store is its package (its module), its row here,
// an install script and a launcher per server, and its fault backend; plus
// its line in scripts/bench-page (which measures some stores in variants,
// so lists them by hand). Everything else (the harness's backend list, the
// CLI's usage, the README's table, leasehold bench) is derived from the
// table.

// root is the repository's root, seen from this package's folder.
const root = ".."

// modulePath is the repository's root module.
const modulePath = "github.com/leasehold-go/leasehold"

// TestStorePlaces checks, for every row of the store table, each place a
// store must have: its package and adapters, its module in go.work, its
// row's file (and, for a store with a build tag, the file that names it
// when the tag leaves it out), an install script and a launcher for each
// of its servers, and its fault-harness backend's file (the harness's own
// test checks that NewBackend makes it).
func TestStorePlaces(t *testing.T) {
	work := goWorkModules(t)
	b, err := os.ReadFile(filepath.Join(root, "internal", "testserver", "cmd", "servers", "kinds.go"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := string(b)
	page := benchPage(t)
	for _, k := range Stores() {
		why, pending := pendingPlaces[k.Name]
		if pending {
			t.Logf("%s: no fault backend yet: %s", k.Name, why)
		}
		page.check(t, k)
		for _, p := range append([]string{k.Package}, k.Adapters...) {
			if !hasGoFiles(filepath.Join(root, p)) {
				t.Errorf("%s: its package %s/ has no Go files", k.Name, p)
			}
		}
		if mod := moduleOf(t, k.Package); !work[mod] {
			t.Errorf("%s: its module %s/ is not in go.work", k.Name, mod)
		}
		checkRowFiles(t, k)
		for _, s := range k.Servers {
			mustExist(t, k.Name, filepath.Join("scripts", "install", s+".sh"), "the install script of its server "+s)
			mustExist(t, k.Name, filepath.Join("internal", "testserver", launcherFile(s)), "the launcher of its server "+s)
			if !strings.Contains(kinds, "{\""+s+"\", ") {
				t.Errorf("%s: its server %s is not a kind of internal/testserver/cmd/servers (kinds.go), which the scripts start servers with", k.Name, s)
			}
		}
		if pending {
			continue
		}
		if len(k.FaultBackends) > 0 {
			mustExist(t, k.Name, filepath.Join("faults", "harness", "backend_"+k.Name+".go"), "its fault backend")
		} else if k.Memory != MemoryHeap {
			t.Errorf("%s: no fault backend; only a store in the test's own process may have none", k.Name)
		}
	}
}

// pendingPlaces are the rows whose fault backend is not written yet, each
// with why: a list of work to do, which should end empty.
var pendingPlaces = map[string]string{}

// launcherFiles are the servers whose launcher in internal/testserver/ is
// not <server>.go.
var launcherFiles = map[string]string{"kube-apiserver": "kube.go"}

// launcherFile returns the file name of server s's launcher.
func launcherFile(s string) string {
	if f, ok := launcherFiles[s]; ok {
		return f
	}
	return s + ".go"
}

// benchPageLabels are the stores scripts/bench-page measures under a label
// other than their row's name.
var benchPageLabels = map[string]string{"sqlite": "embedded"}

// benchPageLists is what scripts/bench-page lists by hand: the stores it
// measures (its stores+=("LABEL|URL|..." lines) and the servers it
// installs (its `for s in ...; do` loop over scripts/install/).
type benchPageLists struct {
	text     string
	installs []string
}

// benchPage reads scripts/bench-page's lists.
func benchPage(t *testing.T) benchPageLists {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "scripts", "bench-page"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^for s in ([a-z0-9 -]+); do\n\tlog "install: `).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatal("scripts/bench-page: no install loop (for s in SERVER...; do log \"install: ...)")
	}
	return benchPageLists{text: string(b), installs: strings.Fields(m[1])}
}

// check checks that the bench page measures k (a stores+=("LABEL| line, or
// stores+=("LABEL- for a variant such as etcd-3 or redlock-5) and installs
// its servers: the page lists its stores by hand, so a new store would
// otherwise never reach it.
func (p benchPageLists) check(t *testing.T, k Kind) {
	t.Helper()
	label := k.Name
	if l, ok := benchPageLabels[k.Name]; ok {
		label = l
	}
	if !strings.Contains(p.text, `stores+=("`+label+`|`) && !strings.Contains(p.text, `stores+=("`+label+`-`) {
		t.Errorf("%s: scripts/bench-page does not measure it: no stores+=(\"%s|URL|...\") line", k.Name, label)
	}
	for _, s := range k.Servers {
		if !slices.Contains(p.installs, s) {
			t.Errorf("%s: scripts/bench-page's install loop (for s in ...) does not install its server %s", k.Name, s)
		}
	}
}

// checkRowFiles checks that k's row is in storeurl/<name>.go and, when a
// build tag can leave the store out, that <name>.go carries the tag's
// negation and <name>_leftout.go the tag. Every store in a module of its
// own (it pulls a client library) has a tag, but the default store.
func checkRowFiles(t *testing.T, k Kind) {
	t.Helper()
	row := k.Name + ".go"
	b, err := os.ReadFile(row)
	if err != nil || !strings.Contains(string(b), "\nfunc "+k.Name+"Row() Kind {") {
		t.Errorf("%s: its row is not in storeurl/%s (func %sRow() Kind): %v", k.Name, row, k.Name, err)
	}
	ownModule := moduleOf(t, k.Package) != "."
	if k.BuildTag == "" {
		if ownModule && k.Name != "sqlite" {
			t.Errorf("%s: its module %s pulls a client library, but no build tag leaves it out", k.Name, moduleOf(t, k.Package))
		}
		return
	}
	if !strings.HasPrefix(string(b), "//go:build !"+k.BuildTag+"\n") {
		t.Errorf("%s: storeurl/%s does not begin with //go:build !%s", k.Name, row, k.BuildTag)
	}
	lo, err := os.ReadFile(k.Name + "_leftout.go")
	if err != nil || !strings.HasPrefix(string(lo), "//go:build "+k.BuildTag+"\n") {
		t.Errorf("%s: storeurl/%s_leftout.go does not begin with //go:build %s: %v", k.Name, k.Name, k.BuildTag, err)
	}
}

// TestModulesInWorkspace checks that go.work uses every module of the
// tree but tools/ (the project's own tools) and */bench (the comparisons,
// which pull the peers' client libraries), and nothing else; and that
// every require of a sibling module comes with its replace (the tests run
// each module against its own go.mod).
func TestModulesInWorkspace(t *testing.T) {
	work := goWorkModules(t)
	found := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "go.mod" {
			return err
		}
		dir, _ := filepath.Rel(root, filepath.Dir(p))
		dir = filepath.ToSlash(dir)
		if strings.HasPrefix(dir, "tools/") || filepath.Base(dir) == "bench" {
			return nil
		}
		found[dir] = true
		if !work[dir] {
			t.Errorf("module %s/ is not in go.work", dir)
		}
		checkReplaces(t, dir)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir := range work {
		if !found[dir] {
			t.Errorf("go.work uses %s/, which is not a module of the tree", dir)
		}
	}
}

// checkReplaces checks that the go.mod in dir replaces each sibling module
// it requires by that module's folder.
func checkReplaces(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || (f[0] != modulePath && !strings.HasPrefix(f[0], modulePath+"/")) || f[1] == "=>" {
			continue
		}
		target := strings.TrimPrefix(strings.TrimPrefix(f[0], modulePath), "/")
		if target == "" {
			target = "."
		}
		rel, _ := filepath.Rel(dir, target)
		want := filepath.ToSlash(rel)
		if !strings.HasPrefix(want, ".") {
			want = "./" + want
		}
		if !strings.Contains(text, f[0]+" => "+want+"\n") && !strings.Contains(text, f[0]+" => "+want+"/\n") {
			t.Errorf("%s/go.mod requires %s without replacing it by %s", dir, f[0], want)
		}
	}
}

// goWorkModules returns the folders go.work uses, relative to the root.
func goWorkModules(t *testing.T) map[string]bool {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]bool{}
	inUse := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "//")
		line = strings.TrimSpace(line)
		switch {
		case line == "use (":
			inUse = true
		case inUse && line == ")":
			inUse = false
		case inUse && line != "":
			out[filepath.ToSlash(filepath.Clean(line))] = true
		case strings.HasPrefix(line, "use "):
			out[filepath.ToSlash(filepath.Clean(strings.TrimSpace(strings.TrimPrefix(line, "use "))))] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// moduleOf returns the folder of the module holding the package at pkg,
// relative to the root ("." for the root module).
func moduleOf(t *testing.T, pkg string) string {
	t.Helper()
	for dir := pkg; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(root, dir, "go.mod")); err == nil {
			return filepath.ToSlash(dir)
		}
		if dir == "." || dir == "/" {
			t.Fatalf("no go.mod above %s", pkg)
		}
	}
}

func hasGoFiles(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	return slices.ContainsFunc(m, func(p string) bool { return !strings.HasSuffix(p, "_test.go") })
}

func mustExist(t *testing.T, store, rel, what string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
		t.Errorf("%s: %s, %s, is missing", store, what, rel)
	}
}
