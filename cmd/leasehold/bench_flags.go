package main

import (
	"errors"
	"flag"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold/bench"
)

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, " ") }

func (l *listFlag) Set(s string) error {
	*l = append(*l, s)
	return nil
}

// benchFlags are the bench command's flags as given.
type benchFlags struct {
	stores, froms                      listFlag
	clients, keys, scale, herd, memPID string
	chart, title                       string
	duration                           *time.Duration
	asJSON, markdown, prims            bool
	probes, handoffs                   int
}

// newBenchFlags defines the bench command's flags.
func newBenchFlags() (*flag.FlagSet, *benchFlags) {
	fs := newFlags("bench")
	f := &benchFlags{}
	fs.Var(&f.stores, "store", "store URL (repeatable)")
	fs.Var(&f.froms, "from", "earlier results (repeatable)")
	fs.StringVar(&f.clients, "clients", "1,8,64", "numbers of concurrent clients")
	f.duration = durationFlag(fs, "duration", 10*time.Second, "how long each client count cycles")
	fs.StringVar(&f.keys, "keys", "distinct", "distinct or hot")
	fs.BoolVar(&f.asJSON, "json", false, "print JSON lines")
	fs.BoolVar(&f.markdown, "markdown", false, "print the table in Markdown")
	fs.StringVar(&f.chart, "chart", "", "SVG file to draw")
	fs.StringVar(&f.title, "title", "leasehold bench", "the chart's title")
	fs.StringVar(&f.scale, "scale", "", "held-lease counts")
	fs.IntVar(&f.probes, "probes", 200, "cycles timed per held-lease count")
	fs.StringVar(&f.herd, "herd", "", "numbers of waiting clients")
	fs.StringVar(&f.memPID, "mem-pid", "", "server process ids for --scale memory")
	fs.IntVar(&f.handoffs, "handoffs", 10, "hand-offs timed per run")
	fs.BoolVar(&f.prims, "prims", false, "measure the semaphore and the read-write lock")
	return fs, f
}

// parseBench parses and checks the command line. When it returns no plan,
// the command ends with the exit status it returns.
func (a *app) parseBench(args []string) (*benchPlan, int) {
	fs, f := newBenchFlags()
	if _, code, ok := a.parse(fs, "bench", args); !ok {
		return nil, code
	}
	p, err := f.plan(fs)
	if err != nil {
		return nil, a.fail("bench", err)
	}
	return p, exitOK
}

// plan checks the parsed flags of fs and returns the plan they give, or
// every problem found.
func (f *benchFlags) plan(fs *flag.FlagSet) (*benchPlan, error) {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	p := &benchPlan{duration: *f.duration, asJSON: f.asJSON, chart: f.chart, title: f.title, probes: f.probes, handoffs: f.handoffs}
	if f.markdown {
		p.format = bench.Markdown
	}
	var errs []error
	var err error
	if p.clients, err = parseCounts("--clients", f.clients, 1); err != nil {
		errs = append(errs, err)
	}
	if f.scale != "" {
		if p.scale, err = parseCounts("--scale", f.scale, 0); err != nil {
			errs = append(errs, err)
		}
	}
	if f.herd != "" {
		if p.herd, err = parseCounts("--herd", f.herd, 1); err != nil {
			errs = append(errs, err)
		}
	}
	if f.memPID != "" {
		if p.memPIDs, err = parseCounts("--mem-pid", f.memPID, 1); err != nil {
			errs = append(errs, err)
		}
	}
	if p.keys, err = bench.ParseKeyMode(f.keys); err != nil {
		errs = append(errs, usagef("--keys %q: use distinct (one key per client) or hot (one key for all)", f.keys))
	}
	if p.duration <= 0 {
		errs = append(errs, usagef("--duration %s: give a positive duration such as 10s", p.duration))
	}
	if p.probes <= 0 {
		errs = append(errs, usagef("--probes %d: give a positive number", p.probes))
	}
	if p.handoffs < 0 {
		errs = append(errs, usagef("--handoffs %d is negative (0 times none)", p.handoffs))
	}
	if p.handoffs == 0 {
		p.handoffs = -1 // bench.Options: negative for none
	}
	p.prims = f.prims
	if p.prims && p.asJSON {
		errs = append(errs, usagef("--prims prints tables and SUMMARY lines, not JSON: leave out --json"))
	}
	p.cycles = set["clients"] || (len(p.scale) == 0 && len(p.herd) == 0 && !p.prims)
	for _, file := range f.froms {
		if err := readResults(file, &p.previous); err != nil {
			errs = append(errs, err)
		}
	}
	if p.chart != "" {
		if err := checkWritable(p.chart); err != nil {
			errs = append(errs, err)
		}
	}
	p.stores = f.stores
	if len(p.stores) == 0 && len(f.froms) == 0 {
		p.stores = append(p.stores, "") // the default store
	}
	return p, errors.Join(errs...)
}

// parseCounts parses a comma-separated list of integers of at least least.
func parseCounts(flagName, s string, least int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		n, err := strconv.Atoi(strings.ReplaceAll(f, "_", ""))
		if err != nil || n < least {
			what := "positive whole numbers"
			if least == 0 {
				what = "whole numbers"
			}
			return nil, usagef("%s %q: give a comma-separated list of %s, such as 1,8,64", flagName, s, what)
		}
		out = append(out, n)
	}
	return out, nil
}

// splitStoreName splits "NAME=URL" into its parts. NAME is letters,
// digits and ._+- ; a value without one (a URL's own "=" comes after its
// scheme's ":") gives an empty name.
func splitStoreName(s string) (name, rawURL string) {
	i := strings.IndexByte(s, '=')
	if i <= 0 {
		return "", s
	}
	for _, r := range s[:i] {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._+-", r)
		if !ok {
			return "", s
		}
	}
	return s[:i], s[i+1:]
}

// scheme returns the URL's scheme in lower case, "" if it has none.
func scheme(raw string) string {
	if i := strings.Index(raw, ":"); i > 0 {
		return strings.ToLower(raw[:i])
	}
	return ""
}

// redact hides a URL's password for messages.
func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return "(the URL given)"
}

// readResults adds the results in file to rep.
func readResults(file string, rep *bench.Report) error {
	f, err := os.Open(file)
	if err != nil {
		return usagef("--from: %v", err)
	}
	defer f.Close()
	if err := bench.ReadJSON(f, rep); err != nil {
		return usagef("--from %s: %s", file, strings.TrimPrefix(err.Error(), "bench: "))
	}
	return nil
}

// checkWritable fails unless a file can be created in path's directory,
// so that a chart that could not be written is found before the load.
func checkWritable(path string) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".leasehold-bench-*")
	if err != nil {
		return usagef("--chart %s: cannot write there: %v", path, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}
