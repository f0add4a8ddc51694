package storeurl

import "strings"

// MarkdownTable renders the store table as the README shows it: one row per
// store with its package, URLs, where its fencing token comes from, and
// notes. The README's copy is checked against it by this package's tests.
func MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| store | package | URL | fencing token | notes |\n")
	b.WriteString("| --- | --- | --- | --- | --- |\n")
	for _, k := range Stores() {
		pkg := code(k.Package)
		if len(k.Adapters) > 0 {
			pkg += " (+ " + codes(k.Adapters) + ")"
		}
		b.WriteString("| " + strings.Join([]string{k.Title, pkg, codes(k.URLs), k.Token, k.Notes}, " | ") + " |\n")
	}
	return b.String()
}

// UsageText renders the store table as the CLI's usage shows it.
func UsageText() string {
	var b strings.Builder
	for _, k := range Stores() {
		b.WriteString("  " + strings.ReplaceAll(k.Usage, "\n", "\n  ") + "\n")
	}
	return b.String()
}

func code(s string) string { return "`" + s + "`" }

func codes(ss []string) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = code(s)
	}
	return strings.Join(out, ", ")
}
