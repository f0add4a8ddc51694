package main

import (
	"flag"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold/storeurl"
)

// The README's CLI block sits between these markers.
const (
	cliStart = "<!-- cli: every command and flag of `leasehold help`; held to it by cmd/leasehold TestREADMEUsage -->\n```\n"
	cliEnd   = "```\n<!-- cli: end -->"
)

var (
	flagName = regexp.MustCompile(`--[a-z][a-z-]*`)
	keyWord  = regexp.MustCompile(`\bKEY\b`)
)

// synopsisFlags reads lines of "leasehold COMMAND ..." (a line that starts
// with a space goes on with the command above) into each command's flags.
// The word KEY stands for --key: the key is given first, or by --key.
func synopsisFlags(t *testing.T, text string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	cmd := ""
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "leasehold" {
			cmd = f[1]
			if _, dup := out[cmd]; dup {
				t.Fatalf("command %s listed twice in %q", cmd, text)
			}
			out[cmd] = nil
			line = strings.Join(f[2:], " ")
		} else if cmd == "" || !strings.HasPrefix(line, " ") {
			t.Fatalf("line %q is neither a command nor goes on with one", line)
		}
		out[cmd] = append(out[cmd], lineFlags(line)...)
	}
	for cmd, flags := range out {
		slices.Sort(flags)
		out[cmd] = slices.Compact(flags)
	}
	return out
}

// lineFlags returns the flags a line of usage names.
func lineFlags(line string) []string {
	flags := flagName.FindAllString(line, -1)
	if keyWord.MatchString(line) {
		flags = append(flags, "--key")
	}
	return flags
}

// definedFlags returns the flags that cmd defines, sorted.
func definedFlags(t *testing.T, cmd string) []string {
	if cmd == "help" {
		return nil
	}
	var out []string
	flagSet(t, cmd).VisitAll(func(f *flag.Flag) { out = append(out, "--"+f.Name) })
	slices.Sort(out)
	return out
}

// commandFlags returns the flags that "leasehold help cmd" names in its
// Usage line and its Flags section.
func commandFlags(text string) []string {
	usage, _, _ := strings.Cut(text, "\n\n")
	flags := lineFlags(strings.ReplaceAll(usage, "(or leasehold --version)", ""))
	if _, section, ok := strings.Cut(text, "\nFlags:\n"); ok {
		for _, line := range strings.Split(section, "\n") {
			if strings.HasPrefix(line, "  --") {
				flags = append(flags, flagName.FindString(line))
			}
		}
	}
	slices.Sort(flags)
	return slices.Compact(flags)
}

// The README's CLI block, the usage of leasehold help, each command's own
// usage and the flags each command defines name the same commands and
// flags: a flag or command added to one and not the others fails here.
func TestREADMEUsage(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(b), cliStart)
	block, _, ok2 := strings.Cut(block, cliEnd)
	if !ok || !ok2 {
		t.Fatalf("README: no CLI block between %q and %q", cliStart, cliEnd)
	}
	readme, usage := synopsisFlags(t, block), synopsisFlags(t, synopsis)
	if got, want := slices.Sorted(maps.Keys(readme)), slices.Sorted(slices.Values(commands)); !slices.Equal(got, want) {
		t.Errorf("the README's CLI block lists the commands %q; leasehold has %q", got, want)
	}
	if got := slices.Sorted(maps.Keys(usage)); !slices.Equal(got, slices.Sorted(slices.Values(commands))) {
		t.Errorf("leasehold help lists the commands %q; leasehold has %q", got, commands)
	}
	for _, cmd := range commands {
		defined := definedFlags(t, cmd)
		for what, flags := range map[string][]string{
			"the README's CLI block": readme[cmd],
			"leasehold help":         usage[cmd],
			"leasehold help " + cmd:  commandFlags(commandUsage[cmd]),
		} {
			if !slices.Equal(flags, defined) {
				t.Errorf("%s gives %s the flags %q; it defines %q", what, cmd, flags, defined)
			}
		}
	}
}

// leasehold help migrate names exactly the stores of the store table that
// have a migration.
func TestMigrateUsageNamesTheStores(t *testing.T) {
	text := commandUsage["migrate"]
	for _, k := range storeurl.Stores() {
		line := "  " + k.Title + " "
		if got, want := strings.Contains(text, line), k.Migrate != nil; got != want {
			t.Errorf("leasehold help migrate names %s: %v; it has a migration: %v\n%s", k.Title, got, want, text)
		}
	}
	for _, title := range []string{"PostgreSQL", "Azure Blob", "S3"} {
		if !strings.Contains(text, title) {
			t.Errorf("leasehold help migrate does not name %s:\n%s", title, text)
		}
	}
}
