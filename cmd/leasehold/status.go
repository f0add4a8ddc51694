package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

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
}

func toJSON(h leasehold.Holder) holderJSON {
	return holderJSON{Key: h.Key, Held: true, Label: h.Label, Token: h.Token,
		Remaining: remainingText(h), RemainingMS: h.Remaining.Milliseconds(), MaxRemainingMS: h.MaxRemaining.Milliseconds()}
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
	store := storeFlag(fs)
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
	case asJSON && keyGiven:
		return a.printJSON(toJSON(r.holders[0]))
	case asJSON:
		out := make([]holderJSON, 0, len(r.holders))
		for _, h := range r.holders {
			out = append(out, toJSON(h))
		}
		return a.printJSON(out)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tTOKEN\tHOLDER\tREMAINING")
	if r.free {
		fmt.Fprintf(tw, "%s\t-\t(free)\t-\n", key)
	}
	for _, h := range r.holders {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", h.Key, strconv.FormatUint(h.Token, 10), h.Label, remainingText(h))
	}
	tw.Flush()
	return exitOK
}
