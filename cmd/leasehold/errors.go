package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/storeurl"
)

// fail prints err for cmd and returns its exit status.
func (a *app) fail(cmd string, err error) int {
	if a.jsonErrors {
		return a.failJSON(cmd, err)
	}
	var he *leasehold.HeldError
	if errors.As(err, &he) {
		fmt.Fprintf(a.stderr, "leasehold %s: %s\n", cmd, heldMessage(he))
		return exitHeld
	}
	code := exitCode(err)
	fmt.Fprintf(a.stderr, "leasehold %s: %s\n", cmd, message(err))
	if code == exitUsage {
		if _, ok := commandUsage[cmd]; ok {
			fmt.Fprintf(a.stderr, "(see leasehold help %s)\n", cmd)
		}
	}
	return code
}

// errorJSON is an error on stderr when --json was given.
type errorJSON struct {
	Command string      `json:"command"`
	Error   string      `json:"error"`
	Exit    int         `json:"exit"`
	Holder  *holderJSON `json:"holder,omitempty"` // exit 75: who holds the key
}

// failJSON prints err for cmd as one line of JSON on stderr and returns its
// exit status.
func (a *app) failJSON(cmd string, err error) int {
	e := errorJSON{Command: cmd, Error: message(err), Exit: exitCode(err)}
	var he *leasehold.HeldError
	if errors.As(err, &he) {
		e.Exit, e.Error = exitHeld, heldMessage(he)
		h := toJSON(leasehold.Holder{Key: he.Key, Label: he.Label, Token: he.Token, Remaining: he.Remaining})
		h.Exited = exitedHolder(he.Label)
		e.Holder = &h
	}
	b, _ := json.Marshal(e) // strings and numbers only: never fails
	fmt.Fprintf(a.stderr, "%s\n", b)
	return e.Exit
}

// codedError is an error that ends a command with the exit status code.
type codedError struct {
	code int
	err  error
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }

// exitCode maps an error to the command's exit status.
func exitCode(err error) int {
	var ue *usageError
	var in *interrupted
	var ce *codedError
	switch {
	case errors.As(err, &ce):
		return ce.code
	case errors.As(err, &in):
		return 128 + signum(in.sig)
	}
	switch {
	case errors.As(err, &ue),
		errors.Is(err, leasehold.ErrInvalidKey),
		errors.Is(err, leasehold.ErrInvalidTTL),
		errors.Is(err, leasehold.ErrInvalidWait),
		errors.Is(err, storeurl.ErrBadURL),
		errors.Is(err, storeurl.ErrUnknownScheme),
		errors.Is(err, leasehold.ErrNotPortable):
		return exitUsage
	case errors.Is(err, leasehold.ErrHeld):
		return exitHeld
	case errors.Is(err, leasehold.ErrLost), errors.Is(err, leasehold.ErrNotHeld):
		return exitLost
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	}
	return exitFailure
}

// message is err's text without the packages' "leasehold: " and
// "storeurl: " prefixes, which the command's own prefix replaces.
func message(err error) string {
	s := err.Error()
	for _, p := range []string{"leasehold: ", "storeurl: "} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}

// heldMessage says who holds a key and for how long.
func heldMessage(he *leasehold.HeldError) string {
	s := fmt.Sprintf("key %q is held", he.Key)
	if he.Label != "" {
		s += " by " + he.Label
	}
	if exitedHolder(he.Label) {
		s += " (that process has exited: a one-shot acquire's lease)"
	}
	if he.Token != 0 {
		s += fmt.Sprintf(" with token %d", he.Token)
	}
	if he.Remaining > 0 {
		s += " for another " + roundDuration(he.Remaining).String()
	} else {
		s += " (time left unknown)"
	}
	return s
}

// roundDuration rounds d for people: to 1 ms below a second, else 100 ms.
func roundDuration(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}
