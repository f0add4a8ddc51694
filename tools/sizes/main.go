// Command sizes enforces the repository's size rules on non-test Go files:
// no file over 400 lines and no function over 80 lines, unless the file says
// why in a comment line starting "Long file:" in its first 40 lines, or the
// function's doc comment has a line starting "Long function:". It prints
// every offender and exits 1 if there is one.
//
//	go run ./tools/sizes [dir]    (from the repository root; dir defaults to .)
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

const (
	maxFileLines = 400
	maxFuncLines = 80
)

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	var bad []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		found, err := check(path)
		bad = append(bad, found...)
		return err
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "sizes:", err)
		os.Exit(2)
	}
	for _, b := range bad {
		fmt.Println(b)
	}
	if len(bad) > 0 {
		fmt.Printf("sizes: %d over the limits (file %d lines, function %d lines) without a stated reason\n", len(bad), maxFileLines, maxFuncLines)
		os.Exit(1)
	}
}

// check returns the size-rule offences of one Go file.
func check(path string) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var bad []string
	if n := fset.File(f.Pos()).LineCount(); n > maxFileLines && !fileExcused(fset, f) {
		bad = append(bad, fmt.Sprintf("%s: %d lines (no \"Long file:\" reason in its first 40 lines)", path, n))
	}
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
		if n > maxFuncLines && !hasLine(fn.Doc, "Long function:") {
			bad = append(bad, fmt.Sprintf("%s:%d: func %s is %d lines (no \"Long function:\" reason in its doc)", path, fset.Position(fn.Pos()).Line, name(fn), n))
		}
	}
	return bad, nil
}

func fileExcused(fset *token.FileSet, f *ast.File) bool {
	for _, cg := range f.Comments {
		if fset.Position(cg.Pos()).Line > 40 {
			break
		}
		if hasLine(cg, "Long file:") {
			return true
		}
	}
	return false
}

func hasLine(cg *ast.CommentGroup, prefix string) bool {
	if cg == nil {
		return false
	}
	for _, l := range strings.Split(cg.Text(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), prefix) {
			return true
		}
	}
	return false
}

func name(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return "(" + id.Name + ")." + fn.Name.Name
	}
	return fn.Name.Name
}
