package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/election"
)

// elect runs a command while this process leads the election on a key:
// run's rules, with LEASEHOLD_EPOCH in the command's environment, waiting
// as long as it takes, and campaigning again after a loss unless --once.
func (a *app) elect(args []string) int {
	fs := newFlags("elect")
	key := fs.String("key", "", "the election's key")
	ttl := durationFlag(fs, "ttl", leasehold.DefaultTTL, "leadership lease duration")
	grace := durationFlag(fs, "grace", defaultGrace, "time between SIGTERM and SIGKILL (default min(10s, the most --ttl allows))")
	label := fs.String("label", "", "how observers see this candidate (default host:pid)")
	once := fs.Bool("once", false, "after a loss, exit 76 rather than campaign again")
	store, metricsAddr := clientStoreFlag(fs), metricsFlag(fs)
	jsonFlag(fs)
	c, code, ok := a.parse(fs, "elect", args)
	if !ok {
		return code
	}
	f := runFlags{name: "elect", key: *key, store: *store, label: *label, ttl: *ttl, wait: leasehold.WaitForever, grace: *grace, metricsAddr: *metricsAddr, final: *once}
	if err := f.check(fs, c); err != nil {
		return a.fail("elect", err)
	}
	return a.withMetrics(f, func(f runFlags) int {
		for {
			code := a.runCommand(f)
			if code != exitLost || *once {
				return code
			}
			// Lost: the next leader may already run. Campaign again after
			// a random pause, so that candidates that lost together spread
			// out.
			pause := time.Duration(rand.Int64N(int64(f.ttl/10) + 1))
			fmt.Fprintf(a.stderr, "leasehold elect: campaigning again for %q in %s\n", f.key, roundDuration(pause))
			time.Sleep(pause)
		}
	})
}

// stateJSON is one line of observe --json.
type stateJSON struct {
	Time    string `json:"time"`
	Key     string `json:"key"`
	Leading bool   `json:"leading"`
	Label   string `json:"label,omitempty"`
	Epoch   uint64 `json:"epoch,omitempty"`
	Error   string `json:"error,omitempty"`
}

// observe prints one line per change of the election on a key, until
// interrupted.
func (a *app) observe(args []string) int {
	fs := newFlags("observe")
	key := fs.String("key", "", "the election's key")
	poll := durationFlag(fs, "poll", 0, "the longest between two reads on a store without a native watch (default a third of --ttl)")
	ttl := durationFlag(fs, "ttl", leasehold.DefaultTTL, "the candidates' --ttl")
	asJSON := fs.Bool("json", false, "print JSON lines")
	store := clientStoreFlag(fs)
	if _, code, ok := a.parse(fs, "observe", args); !ok {
		return code
	}
	if err := errors.Join(checkKey(fs), checkTTL(*ttl)); err != nil {
		return a.fail("observe", err)
	}
	err := oneShot(*store, func(ctx context.Context, st leasehold.Store) error {
		c, err := leasehold.New(st, &leasehold.Options{TTL: *ttl, Observer: a.observer(nil)})
		if err != nil {
			return err
		}
		defer c.Close()
		e, err := election.New(c, *key, &election.Options{TTL: *ttl, PollInterval: *poll})
		if err != nil {
			return err
		}
		for s := range e.Observe(ctx) {
			a.printState(*key, s, *asJSON)
			if s.Err != nil && errors.Is(s.Err, leasehold.ErrClosed) {
				return s.Err
			}
		}
		return ctx.Err()
	})
	var in *interrupted
	if errors.As(err, &in) {
		return exitOK // interrupted: the way observe ends
	}
	return a.fail("observe", err)
}

// printState prints one state of the election.
func (a *app) printState(key string, s election.State, asJSON bool) {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	if asJSON {
		j := stateJSON{Time: now, Key: key, Leading: s.Leading, Label: s.Label, Epoch: s.Epoch}
		if s.Err != nil {
			j.Error = message(s.Err)
		}
		b, _ := json.Marshal(j) // strings, numbers and bools: never fails
		fmt.Fprintf(a.stdout, "%s\n", b)
		return
	}
	switch {
	case s.Err != nil:
		fmt.Fprintf(a.stderr, "leasehold observe: %s: reading the leader failed: %s\n", now, message(s.Err))
	case s.Leading:
		fmt.Fprintf(a.stdout, "%s %s leader %s epoch %d\n", now, key, s.Label, s.Epoch)
	default:
		fmt.Fprintf(a.stdout, "%s %s no leader\n", now, key)
	}
}
