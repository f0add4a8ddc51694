package storeurl

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// exampleMark is the README's marker before each snippet that is an
// Example function of a store's package: the store's Info().Name, the
// example file (from the repository's root), the function, and "program"
// when the snippet is the whole file as a main package. The ```go block
// after it is generated from the function.
var exampleMark = regexp.MustCompile("<!-- example: (\\w+): (\\S+) (\\w+)( program)?; [^>]*-->\n```go\n((?s:.*?))```\n")

// readmeExample is one marked snippet of the README.
type readmeExample struct {
	store, file, fn string
	program         bool
	// text is the block as the README has it; start and end are its offsets.
	text       string
	start, end int
}

func readmeExamples(t *testing.T, readme string) []readmeExample {
	t.Helper()
	var out []readmeExample
	for _, m := range exampleMark.FindAllStringSubmatchIndex(readme, -1) {
		out = append(out, readmeExample{
			store: readme[m[2]:m[3]], file: readme[m[4]:m[5]], fn: readme[m[6]:m[7]],
			program: m[8] >= 0, text: readme[m[10]:m[11]], start: m[10], end: m[11],
		})
	}
	if len(out) == 0 {
		t.Fatalf("README.md has no example marker matching %s", exampleMark)
	}
	return out
}

// TestREADMEExamples checks that every README snippet marked as an example
// is the Example function it names, so that the README's code is compiled
// (and, for the stores without a server, run) with the store's tests; and
// that every store in Stores has one, from its own package or an adapter.
func TestREADMEExamples(t *testing.T) {
	readme := readREADME(t)
	exs := readmeExamples(t, readme)
	has := map[string]bool{}
	updated := readme
	for i := len(exs) - 1; i >= 0; i-- {
		ex := exs[i]
		k, ok := kindByName(ex.store)
		if !ok {
			t.Errorf("README example %s %s: no store %q in Stores", ex.file, ex.fn, ex.store)
			continue
		}
		if dir := filepath.ToSlash(filepath.Dir(ex.file)); dir != k.Package && !contains(k.Adapters, dir) {
			t.Errorf("README example %s %s for %s: not in %s's package or an adapter (%s %v)", ex.file, ex.fn, k.Name, k.Name, k.Package, k.Adapters)
		}
		has[k.Name] = true
		want, err := renderExample(filepath.Join("..", ex.file), ex.fn, ex.program)
		if err != nil {
			t.Errorf("README example for %s: %v", k.Name, err)
			continue
		}
		if ex.text == want {
			continue
		}
		if *update {
			updated = updated[:ex.start] + want + updated[ex.end:]
			continue
		}
		t.Errorf("the README's %s example differs from %s %s (run go test ./storeurl -run TestREADMEExamples -update):\n got:\n%s\nwant:\n%s", k.Name, ex.file, ex.fn, ex.text, want)
	}
	if updated != readme {
		if err := os.WriteFile(readmePath, []byte(updated), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range Stores() {
		if !has[k.Name] {
			t.Errorf("README.md has no example that opens the %s store (a marker %q before a ```go block)", k.Name, "<!-- example: "+k.Name+": DIR/example_test.go ExampleOpenURL; ... -->")
		}
	}
}

func kindByName(name string) (Kind, bool) {
	for _, k := range Stores() {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

// renderExample returns the README's form of function fn in the Go file at
// path: its body, unindented and without its Output comment, after an
// import line for each of the project's store packages it imports; or, as
// a program, the whole file with fn as main.
func renderExample(path, fn string, program bool) (string, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return "", err
	}
	var decl *ast.FuncDecl
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == fn && fd.Recv == nil {
			decl = fd
		}
	}
	if decl == nil {
		return "", &os.PathError{Op: "find func " + fn, Path: path, Err: os.ErrNotExist}
	}
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	body := string(src[off(decl.Body.Lbrace)+1 : off(decl.Body.Rbrace)])
	body = strings.TrimPrefix(body, "\n")
	if i := strings.Index(body, "\t// Output:"); i >= 0 {
		body = body[:i]
	}
	if program {
		if len(f.Decls) != 2 || len(f.Imports) == 0 {
			return "", &os.PathError{Op: "render as a program (want one import declaration and one function)", Path: path, Err: os.ErrInvalid}
		}
		imports := string(src[off(f.Decls[0].Pos()):off(f.Decls[0].End())])
		return "package main\n\n" + imports + "\n\nfunc main() {\n" + body + "}\n", nil
	}
	var b strings.Builder
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if strings.HasPrefix(p, modulePath+"/") {
			b.WriteString("import " + im.Path.Value + "\n")
		}
	}
	b.WriteString("\n")
	for _, line := range strings.SplitAfter(body, "\n") {
		b.WriteString(strings.TrimPrefix(line, "\t"))
	}
	return b.String(), nil
}
