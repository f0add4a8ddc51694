// Command leasehold runs commands and shell steps under distributed leases
// with fencing tokens. Run "leasehold help" for its usage.
//
// It is wiring only: the lease lifecycle is the leasehold package's Client,
// and stores are opened by URL with the storeurl package.
package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
)

// Exit statuses; see exitText in usage.go.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitHeld        = 75
	exitLost        = 76
	exitCannotExec  = 126
	exitNotFound    = 127
	exitInterrupted = 130
)

// app is one invocation's surroundings, so tests can run commands in
// process.
type app struct {
	stdin          *os.File // passed to the command of run
	stdout, stderr io.Writer
	jsonErrors     bool         // --json was given: errors go to stderr as JSON
	log            *slog.Logger // from $LEASEHOLD_LOG; nil when off

	// flagSets, when a test sets it, is handed each command's flag set
	// in place of parsing, and the command returns.
	flagSets func(cmd string, fs *flag.FlagSet)
}

func main() {
	a := &app{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}
	var err error
	if a.log, err = setupLogging(os.Getenv("LEASEHOLD_LOG"), os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "leasehold:", err)
		os.Exit(exitUsage)
	}
	os.Exit(a.main(os.Args[1:]))
}

// main dispatches to a subcommand and returns the exit status.
func (a *app) main(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(a.stderr, usageText)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	a.jsonErrors = cmd != "help" && wantsJSON(rest)
	switch cmd {
	case "run":
		return a.run(rest)
	case "acquire":
		return a.acquire(rest)
	case "renew":
		return a.renew(rest)
	case "release":
		return a.release(rest)
	case "status":
		return a.status(rest)
	case "elect":
		return a.elect(rest)
	case "observe":
		return a.observe(rest)
	case "migrate":
		return a.migrate(rest)
	case "bench":
		return a.bench(rest)
	case "serve":
		return a.serve(rest)
	case watchdogCommand: // started by run, not listed
		return watchdogMain(rest, os.Stdin, a.stdout, a.stderr)
	case "version", "--version", "-version":
		return a.version(rest)
	case "help", "-h", "-help", "--help":
		return a.help(rest)
	}
	fmt.Fprintf(a.stderr, "leasehold: unknown command %q; the commands are %s (see leasehold help)\n", cmd, commandList())
	return exitUsage
}

// help prints the usage of leasehold or of one command.
func (a *app) help(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(a.stdout, usageText)
		return exitOK
	}
	text, ok := commandUsage[args[0]]
	if !ok {
		fmt.Fprintf(a.stderr, "leasehold help: unknown command %q; the commands are %s\n", args[0], commandList())
		return exitUsage
	}
	fmt.Fprint(a.stdout, text)
	return exitOK
}

// wantsJSON reports whether args, a command's arguments, ask for --json
// before any "--": how errors found while parsing them are printed.
func wantsJSON(args []string) bool {
	for _, a := range args {
		flag, value, hasValue := strings.Cut(strings.TrimPrefix(a, "-"), "=")
		switch {
		case a == "--":
			return false
		case flag != "-json" && flag != "json":
		case !hasValue:
			return true
		default:
			if b, err := strconv.ParseBool(value); err == nil && b {
				return true
			}
		}
	}
	return false
}

// commandList names the commands for error messages.
func commandList() string { return strings.Join(commands, ", ") }
