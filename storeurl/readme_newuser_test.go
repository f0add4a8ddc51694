package storeurl

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold/internal/testserver"
)

// TestREADMENewUser follows the README as a new user does, in a fresh Go
// module outside the repository whose go.mod replaces this checkout's
// modules (nothing is published from a checkout): the program at the top,
// and for every other store that program with the store's lines swapped
// in as "Open your store" says. Every program must pass go vet; those of
// the embedded store, memory, Redis and PostgreSQL (against throwaway
// servers, only the URL changed) must print that they hold the lease.
func TestREADMENewUser(t *testing.T) {
	readme := readREADME(t)
	var program string
	for _, ex := range readmeExamples(t, readme) {
		if ex.program {
			program = ex.text
		}
	}
	if program == "" {
		t.Fatal("README.md has no example program")
	}
	dir := newUserModule(t)
	done := map[string]bool{}
	for _, ex := range readmeExamples(t, readme) {
		if done[ex.store] {
			continue
		}
		done[ex.store] = true
		src := program
		if !ex.program {
			var err error
			if src, err = swapStore(program, ex.text); err != nil {
				t.Fatalf("the %s snippet: %v", ex.store, err)
			}
		}
		writeFile(t, filepath.Join(dir, ex.store, "main.go"), src)
	}
	goTool(t, dir, "mod", "tidy")
	goTool(t, dir, "vet", "./...")

	r := testserver.NewRedis(t, testserver.RedisOptions{})
	setURL(t, filepath.Join(dir, "redis", "main.go"), `redis://127\.0\.0\.1:6379/0`, r.URL())
	pg := testserver.NewPostgres(t, testserver.PostgresOptions{})
	setURL(t, filepath.Join(dir, "postgres", "main.go"), `postgres://[^"]*`, pg.ConnString())
	for _, store := range []string{"sqlite", "memory", "redis", "postgres"} {
		if out := goTool(t, dir, "run", "./"+store); out != "holding reports/nightly\n" {
			t.Errorf("go run ./%s printed %q; want %q", store, out, "holding reports/nightly\n")
		}
	}
}

// swapStore returns program with the lines of main before leasehold.New
// replaced by snippet's, and the embedded store's imports by snippet's, as
// the README tells the reader to do.
func swapStore(program, snippet string) (string, error) {
	head, body, ok := strings.Cut(snippet, "\n\n")
	if !ok {
		return "", errString("no blank line after the imports")
	}
	body, _, _ = strings.Cut(body, "c, err := leasehold.New(")
	var lines, imports strings.Builder
	for _, l := range strings.SplitAfter(strings.TrimSuffix(body, "\n"), "\n") {
		lines.WriteString("\t" + l)
	}
	lines.WriteString("\n")
	for _, l := range strings.Split(head, "\n") {
		if p, ok := strings.CutPrefix(l, "import "); ok {
			imports.WriteString("\t" + p + "\n")
		}
	}
	const open, newClient = "func main() {\n", "\tc, err := leasehold.New(store, nil)\n"
	i, j := strings.Index(program, open), strings.Index(program, newClient)
	if i < 0 || j < i {
		return "", errString("the program has no " + open + " ... " + newClient)
	}
	out := program[:i+len(open)] + lines.String() + program[j:]
	for _, im := range []string{"\t\"os\"\n", "\t\"path/filepath\"\n"} {
		out = strings.Replace(out, im, "", 1)
	}
	return strings.Replace(out, "\t\""+modulePath+"/sqlite\"\n", imports.String(), 1), nil
}

type errString string

func (e errString) Error() string { return string(e) }

// newUserModule makes a fresh module in a temporary folder that replaces
// every module of this checkout with its folder.
func newUserModule(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "newuser")
	for _, d := range []string{dir, filepath.Join(filepath.Dir(dir), "tmp")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	goTool(t, dir, "mod", "init", "example.com/newuser")
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.Name() == "go.mod" {
			goTool(t, dir, "mod", "edit", "-replace", moduleName(t, p)+"="+filepath.Dir(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// moduleName returns the module path a go.mod declares.
func moduleName(t *testing.T, gomod string) string {
	t.Helper()
	f, err := os.Open(gomod)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(sc.Text(), "module "); ok {
			return strings.TrimSpace(m)
		}
	}
	t.Fatalf("%s has no module line", gomod)
	return ""
}

// goTool runs the go command in dir, with the environment's proxy and
// module cache (a module missing from the cache downloads as for any
// build), and returns its standard output. Its temporary folder (the programs' too)
// is tmp beside the module's folder.
func goTool(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local", "TMPDIR="+filepath.Join(filepath.Dir(dir), "tmp"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// setURL replaces the one match of pattern in the program at path with url.
func setURL(t *testing.T, path, pattern, url string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(pattern)
	if n := len(re.FindAll(b, -1)); n != 1 {
		t.Fatalf("%s: %d matches of %s; want 1", path, n, pattern)
	}
	writeFile(t, path, re.ReplaceAllLiteralString(string(b), url))
}
