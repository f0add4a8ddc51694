package leasetest

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// designDoc is the page that states the rules the suite checks, relative to
// this package's directory.
const designDoc = "../docs/design.md"

// designLink matches a link to a section of the design page in a comment,
// as in "See docs/design.md#the-token-rules.".
var designLink = regexp.MustCompile(`docs/design\.md#([\p{L}\p{N}_-]+)`)

// TestRulesLinkToDesign checks that every rule the suite runs has a doc
// comment linking to a section of docs/design.md, and that every such link
// in the package names a heading that exists, so the links cannot rot.
func TestRulesLinkToDesign(t *testing.T) {
	anchors := headingAnchors(t, designDoc)
	fset := token.NewFileSet()
	files := parsePackage(t, fset)
	methods := map[string]*ast.FuncDecl{} // the suite's methods by name
	links := 0
	for name, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil {
				methods[fd.Name.Name] = fd
			}
		}
		for _, cg := range f.Comments {
			for _, m := range designLink.FindAllStringSubmatch(cg.Text(), -1) {
				links++
				if !anchors[m[1]] {
					t.Errorf("%s:%d: link to docs/design.md#%s: no such heading (headings: %s)",
						name, fset.Position(cg.Pos()).Line, m[1], strings.Join(sortedKeys(anchors), ", "))
				}
			}
		}
	}
	rules := ruleMethods(files)
	if len(rules) == 0 || links == 0 {
		t.Fatalf("found %d rules and %d links: the parse of Run's subtest table is out of date", len(rules), links)
	}
	for _, r := range rules {
		fd := methods[r]
		if fd == nil {
			t.Errorf("rule method %s not found", r)
			continue
		}
		if fd.Doc == nil || !designLink.MatchString(fd.Doc.Text()) {
			t.Errorf("rule method %s has no doc line linking to docs/design.md#<section>", r)
		}
	}
}

// parsePackage parses the files of package leasetest in this directory,
// with their comments, by file name.
func parsePackage(t *testing.T, fset *token.FileSet) map[string]*ast.File {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{}
	for _, name := range names {
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name.Name == "leasetest" {
			files[name] = f
		}
	}
	return files
}

// ruleMethods returns the suite methods Run runs as subtests: the entries
// {"name", s.method} of its table.
func ruleMethods(files map[string]*ast.File) []string {
	var out []string
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || fd.Name.Name != "Run" {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				cl, ok := n.(*ast.CompositeLit)
				if !ok || len(cl.Elts) != 2 {
					return true
				}
				name, ok1 := cl.Elts[0].(*ast.BasicLit)
				sel, ok2 := cl.Elts[1].(*ast.SelectorExpr)
				if ok1 && ok2 && name.Kind == token.STRING {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "s" {
						out = append(out, sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
	return out
}

// headingAnchors returns the anchors GitHub gives the headings of the
// Markdown file at path (headings inside fenced code blocks excluded).
func headingAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("the design page: %v", err)
	}
	defer f.Close()
	seen := map[string]int{}
	anchors := map[string]bool{}
	fenced := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if text, ok := headingText(line); ok {
			anchors[anchorOf(text, seen)] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return anchors
}

// headingText returns the text of an ATX heading line ("## Text").
func headingText(line string) (string, bool) {
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n == len(line) || line[n] != ' ' {
		return "", false
	}
	return strings.TrimSpace(strings.TrimRight(strings.TrimSpace(line[n:]), "#")), true
}

// anchorOf is GitHub's anchor for a heading: lower case, punctuation other
// than '-' and '_' dropped, spaces turned into '-', and "-1", "-2", ...
// appended to repeats (seen counts them).
func anchorOf(text string, seen map[string]int) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.IsLetter(r) || unicode.IsNumber(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	a := b.String()
	n := seen[a]
	seen[a] = n + 1
	if n > 0 {
		a += "-" + strconv.Itoa(n)
	}
	return a
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestAnchorOf checks the anchor rule against headings whose GitHub anchors
// are known.
func TestAnchorOf(t *testing.T) {
	seen := map[string]int{}
	for _, c := range []struct{ heading, want string }{
		{"The token rules", "the-token-rules"},
		{"The holder's deadline", "the-holders-deadline"},
		{"Owner ids and clean-up", "owner-ids-and-clean-up"},
		{"`Store` methods, and `Info()`", "store-methods-and-info"},
		{"Safety matrix", "safety-matrix"},
		{"Safety matrix", "safety-matrix-1"},
	} {
		if got := anchorOf(c.heading, seen); got != c.want {
			t.Errorf("anchorOf(%q) = %q, want %q", c.heading, got, c.want)
		}
	}
	for _, c := range []struct {
		line string
		ok   bool
	}{{"## The contract", true}, {"#nope", false}, {"####### seven", false}, {"text", false}} {
		if _, ok := headingText(c.line); ok != c.ok {
			t.Errorf("headingText(%q) ok = %v, want %v", c.line, ok, c.ok)
		}
	}
}

// mdLink matches a relative Markdown link target: a path, an anchor, or
// both.
var mdLink = regexp.MustCompile(`\]\(([^)#:]*)(?:#([^)]*))?\)`)

// TestDesignLinks checks the design page's own links: files it names
// exist, and anchors it names (on itself or on a page beside it) exist.
func TestDesignLinks(t *testing.T) {
	text, err := os.ReadFile(designDoc)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(designDoc)
	matches := mdLink.FindAllStringSubmatch(string(text), -1)
	if len(matches) == 0 {
		t.Fatal("no links found: the link pattern is out of date")
	}
	for _, m := range matches {
		target, anchor := m[1], m[2]
		page := designDoc
		if target != "" {
			page = filepath.Join(dir, target)
			if _, err := os.Stat(page); err != nil {
				t.Errorf("link %s: %v", m[0], err)
				continue
			}
		}
		if anchor != "" && !headingAnchors(t, page)[anchor] {
			t.Errorf("link %s: %s has no heading with anchor %q", m[0], page, anchor)
		}
	}
}
