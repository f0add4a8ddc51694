package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/leasehold-go/leasehold"
)

// holderJSON is one key in status's --json output.
type holderJSON struct {
	Key         string `json:"key"`
	Held        bool   `json:"held"`
	Label       string `json:"label,omitempty"`
	Token       uint64 `json:"token,omitempty"`
	Remaining   string `json:"remaining,omitempty"`
	RemainingMS int64  `json:"remaining_ms,omitempty"`
	// MaxRemainingMS bounds the time left when the store cannot tell it
	// (remaining is then "up to ...").
	MaxRemainingMS int64 `json:"max_remaining_ms,omitempty"`
	// Exited: the label names a process on this host (host:pid) that has
	// exited, such as a leasehold acquire: the lease lasts until it is
	// released or expires.
	Exited bool `json:"exited,omitempty"`
}

func toJSON(h leasehold.Holder) holderJSON {
	return holderJSON{Key: h.Key, Held: true, Label: h.Label, Token: h.Token,
		Remaining: remainingText(h), RemainingMS: h.Remaining.Milliseconds(), MaxRemainingMS: h.MaxRemaining.Milliseconds()}
}

// exitedHolder reports whether label, as leasehold.DefaultLabel makes it
// (host:pid), names a process on this host that has exited.
func exitedHolder(label string) bool {
	i := strings.LastIndexByte(label, ':')
	if i < 0 {
		return false
	}
	pid, err := strconv.Atoi(label[i+1:])
	if err != nil || pid <= 0 {
		return false
	}
	host, err := os.Hostname()
	return err == nil && label[:i] == host && processGone(pid)
}

// exitedNote says, for a holder whose process has exited, how long its
// lease lasts.
func exitedNote(h leasehold.Holder, now time.Time) string {
	until := "until it expires"
	switch {
	case h.Remaining > 0:
		until += " at " + now.Add(h.Remaining).UTC().Format(time.RFC3339)
	case h.MaxRemaining > 0:
		until += ", in up to " + roundDuration(h.MaxRemaining).String()
	}
	return fmt.Sprintf("%s: held by %s (that process has exited; the lease lasts %s or is released with leasehold release)", h.Key, h.Label, until)
}

// remainingText is a holder's time left as status shows it: the time left,
// or, when the store does not know it (a Consul session's timer is on its
// leader), "up to" the bound it gives, rather than a misleading 0s.
func remainingText(h leasehold.Holder) string {
	if h.Remaining <= 0 && h.MaxRemaining > 0 {
		return "up to " + roundDuration(h.MaxRemaining).String()
	}
	return roundDuration(h.Remaining).String()
}

func (a *app) status(args []string) int {
	fs := newFlags("status")
	key := fs.String("key", "", "one key")
	prefix := fs.String("prefix", "", "every held key starting with this")
	asJSON := jsonFlag(fs)
	store := clientStoreFlag(fs)
	if _, code, ok := a.parse(fs, "status", args); !ok {
		return code
	}
	keyGiven := flagGiven(fs, "key")
	var err error
	switch {
	case keyGiven && *prefix != "":
		err = usagef("give a key or --prefix, not both")
	case keyGiven:
		err = checkKey(fs)
	}
	if err != nil {
		return a.fail("status", err)
	}

	// An embedded store whose file does not exist holds nothing, and
	// opening it would create the file and its folders.
	r := statusResult{free: keyGiven}
	if !noEmbeddedFile(*store) {
		r, err = readStatus(*store, *key, *prefix, keyGiven)
	}
	if err != nil {
		return a.fail("status", err)
	}
	return a.printStatus(r, *key, keyGiven, *asJSON)
}

// statusResult is what status read: the holders, sorted by key, and whether
// the one key asked for is free.
type statusResult struct {
	holders []leasehold.Holder
	free    bool
}

// readStatus reads the holder of key, or the holders of the keys under
// prefix, from the store.
func readStatus(store, key, prefix string, keyGiven bool) (statusResult, error) {
	var r statusResult
	err := oneShot(store, func(ctx context.Context, st leasehold.Store) error {
		if keyGiven {
			h, err := st.Holder(ctx, key)
			if errors.Is(err, leasehold.ErrNotHeld) {
				return nil
			}
			r.holders = []leasehold.Holder{h}
			return err
		}
		l, ok := st.(leasehold.Lister)
		if !ok {
			return fmt.Errorf("the %s store cannot list keys; ask for one with --key", st.Info().Name)
		}
		var err error
		r.holders, err = l.List(ctx, prefix)
		return err
	})
	r.free = keyGiven && len(r.holders) == 0
	slices.SortFunc(r.holders, func(x, y leasehold.Holder) int { return strings.Compare(x.Key, y.Key) })
	return r, err
}

// printStatus prints r as a table or as JSON.
func (a *app) printStatus(r statusResult, key string, keyGiven, asJSON bool) int {
	switch {
	case asJSON && r.free:
		return a.printJSON(holderJSON{Key: key})
	}
	out := make([]holderJSON, 0, len(r.holders))
	for _, h := range r.holders {
		j := toJSON(h)
		j.Exited = exitedHolder(h.Label)
		out = append(out, j)
	}
	switch {
	case asJSON && keyGiven:
		return a.printJSON(out[0])
	case asJSON:
		return a.printJSON(out)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tTOKEN\tHOLDER\tREMAINING")
	if r.free {
		fmt.Fprintf(tw, "%s\t-\t(free)\t-\n", key)
	}
	var notes []string
	for i, h := range r.holders {
		label := h.Label
		if out[i].Exited {
			label += " (exited)"
			notes = append(notes, exitedNote(h, time.Now()))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", h.Key, strconv.FormatUint(h.Token, 10), label, remainingText(h))
	}
	tw.Flush()
	for _, n := range notes {
		fmt.Fprintln(a.stdout, n)
	}
	return exitOK
}
