package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold"
)

// usageError is bad input found by the command itself: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// newFlags returns the flag set of a subcommand. Its errors are returned by
// parse, not printed.
func newFlags(cmd string) *flag.FlagSet {
	fs := flag.NewFlagSet("leasehold "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parse parses args, the command line of cmd, into fs (see parseLine). It
// returns false, with the exit status, when the command must stop: after
// printing the usage for -h, or an error. With a --json flag, the flag's
// value decides from then on how errors are printed.
func (a *app) parse(fs *flag.FlagSet, cmd string, args []string) (cmdLine, int, bool) {
	if a.flagSets != nil { // a test collects the flag sets
		a.flagSets(cmd, fs)
		return cmdLine{}, exitOK, false
	}
	c, err := parseLine(fs, cmd, args)
	if j := fs.Lookup("json"); j != nil && err == nil {
		a.jsonErrors = j.Value.String() == "true"
	}
	if err == nil {
		err = withTokenFile(fs)
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(a.stdout, commandUsage[cmd])
		return c, exitOK, false
	case err != nil:
		return c, a.fail(cmd, err), false
	}
	return c, 0, true
}

// jsonFlag defines --json, which every command but help takes: the
// command's output, if it prints any, is JSON, and an error that ends it
// is one line of JSON on stderr (errorJSON).
func jsonFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("json", false, "print JSON, and errors as one line of JSON on stderr")
}

// durationValue is a flag.Value for a time.Duration with a clear error.
type durationValue struct{ d *time.Duration }

func durationFlag(fs *flag.FlagSet, name string, def time.Duration, help string) *time.Duration {
	d := new(time.Duration)
	*d = def
	fs.Var(durationValue{d}, name, help)
	return d
}

func (v durationValue) String() string {
	if v.d == nil {
		return ""
	}
	return v.d.String()
}

func (v durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration such as 15s, 500ms or 2m", s)
	}
	*v.d = d
	return nil
}

// waitValue is --wait: a duration, or "forever" (leasehold.WaitForever).
type waitValue struct{ d *time.Duration }

// waitFlag defines --wait.
func waitFlag(fs *flag.FlagSet) *time.Duration {
	d := new(time.Duration)
	fs.Var(waitValue{d}, "wait", `how long to wait for the key (0: try once; "forever": until interrupted)`)
	return d
}

func (v waitValue) String() string {
	if v.d != nil && *v.d == leasehold.WaitForever {
		return "forever"
	}
	return durationValue(v).String()
}

func (v waitValue) Set(s string) error {
	if s == "forever" {
		*v.d = leasehold.WaitForever
		return nil
	}
	if err := durationValue(v).Set(s); err != nil {
		return fmt.Errorf(`%q is neither a duration such as 15s, 500ms or 2m nor "forever"`, s)
	}
	return nil
}

// checkTTL validates a TTL before any store is opened; the store's own
// bounds are checked once it is.
func checkTTL(ttl time.Duration) error {
	return leasehold.ValidateTTL(ttl, leasehold.Info{})
}

// checkWait validates --wait.
func checkWait(wait time.Duration) error {
	if wait < 0 {
		return fmt.Errorf("%w: --wait %s is negative (0 tries once)", leasehold.ErrInvalidWait, wait)
	}
	return nil
}

// orEnv returns v, or the environment variable name when v is empty.
func orEnv(v, name string) string {
	if v != "" {
		return v
	}
	return os.Getenv(name)
}

// parseToken parses a fencing token given as --token or LEASEHOLD_TOKEN.
func parseToken(s string) (uint64, error) {
	if s == "" {
		return 0, usagef("--token is required (or set LEASEHOLD_TOKEN)")
	}
	t, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil || t == 0 {
		return 0, usagef("token %q is not a positive decimal number", s)
	}
	return t, nil
}
