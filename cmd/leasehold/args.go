package main

import (
	"flag"
	"regexp"
	"strconv"
	"strings"

	"github.com/leasehold-go/leasehold"
)

// cmdLine is what is left of a command line once its flags are set.
type cmdLine struct {
	// dashes: a "--" was given; command holds what came after it (run and
	// elect: the command to run).
	dashes  bool
	command []string
}

// takesCommand are the commands whose arguments after "--" are a command
// to run; for the others they are plain arguments (a key that starts with
// "-" can be given as leasehold status -- -odd).
func takesCommand(cmd string) bool { return cmd == "run" || cmd == "elect" }

// parseLine parses the command line of cmd into fs, as etcdctl and most
// Unix commands take it: flags anywhere before "--", in the forms --flag,
// -flag, --flag=value, --flag value (a boolean flag takes no separate
// value). For a command with a --key flag, the first argument that is not
// a flag is the key. An unknown flag is named as it was written.
func parseLine(fs *flag.FlagSet, cmd string, args []string) (cmdLine, error) {
	var c cmdLine
	var rest []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			c.dashes = true
			if takesCommand(cmd) {
				c.command = args[i+1:]
			} else {
				rest = append(rest, args[i+1:]...)
			}
			break
		}
		if len(arg) < 2 || arg[0] != '-' {
			rest = append(rest, arg)
			continue
		}
		n, err := setFlag(fs, args[i:])
		if err != nil {
			return c, err
		}
		i += n - 1
	}
	return c, takeKey(fs, cmd, c, rest)
}

// setFlag sets the flag that args[0] names, with its value, and returns
// how many arguments it took (1 or 2).
func setFlag(fs *flag.FlagSet, args []string) (int, error) {
	written, value, hasValue := strings.Cut(args[0], "=")
	name := strings.TrimPrefix(written[1:], "-")
	if name == "" || name[0] == '-' {
		return 0, usagef("bad flag syntax: %s", showFlag(args[0]))
	}
	written = showFlag(written)
	f := fs.Lookup(name)
	switch {
	case f == nil && (name == "h" || name == "help"):
		return 0, flag.ErrHelp
	case f == nil:
		return 0, usagef("unknown flag %s", written)
	}
	b, isBool := f.Value.(interface{ IsBoolFlag() bool })
	isBool = isBool && b.IsBoolFlag()
	took := 1
	switch {
	case hasValue:
	case isBool:
		value = "true"
	case len(args) < 2:
		return 0, usagef("flag %s needs a value", written)
	default:
		value, took = args[1], 2
	}
	if err := fs.Set(name, value); err != nil {
		if isBool {
			return 0, usagef("invalid value %q for flag %s: give %s alone, or %s=true or %s=false", value, written, written, written, written)
		}
		return 0, usagef("invalid value %q for flag %s: %v", value, written, err)
	}
	return took, nil
}

// takeKey takes the key from rest, the arguments that are not flags, for a
// command with a --key flag, and refuses any other argument.
func takeKey(fs *flag.FlagSet, cmd string, c cmdLine, rest []string) error {
	if k := fs.Lookup("key"); k != nil && len(rest) > 0 {
		switch {
		case !flagGiven(fs, "key"):
			if err := fs.Set("key", rest[0]); err != nil {
				return err
			}
			rest = rest[1:]
		case rest[0] == k.Value.String():
			rest = rest[1:]
		case !takesCommand(cmd) || c.dashes:
			return usagef("the key is given twice: %q as an argument and %q by --key", rest[0], k.Value.String())
		}
	}
	switch {
	case len(rest) == 0:
		return nil
	case takesCommand(cmd) && !c.dashes:
		return usagef("missing -- before the command (write leasehold %s KEY -- %s ...)", cmd, rest[0])
	case fs.Lookup("key") != nil:
		return usagef("unexpected argument %q (one key, before or after the flags)", rest[0])
	}
	return usagef("unexpected argument %q", rest[0])
}

// flagGiven reports whether the flag name was set on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// checkKey validates the key of a command that requires one: given first
// or by --key.
func checkKey(fs *flag.FlagSet) error {
	key := fs.Lookup("key").Value.String()
	switch {
	case key == "" && flagGiven(fs, "key"):
		return errEmptyKey
	case key == "":
		return usagef("the key is required: give it first (leasehold %s KEY ...) or as --key KEY", strings.TrimPrefix(fs.Name(), "leasehold "))
	}
	return leasehold.ValidateKey(key)
}

// plainFlag is a flag as it is usually written.
var plainFlag = regexp.MustCompile(`^--?[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// showFlag returns a flag as written, for a message: quoted unless plain,
// so that a space or a control byte in it is seen.
func showFlag(s string) string {
	if plainFlag.MatchString(s) {
		return s
	}
	return strconv.Quote(s)
}

// errEmptyKey is the error for a key given as "".
var errEmptyKey = usagef("empty key: a key is 1 to %d bytes", leasehold.MaxKeyLen)
