package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"

	"github.com/leasehold-go/leasehold"
)

// oneShot runs f with a context that SIGINT and SIGTERM cancel, on the
// store named by storeURL, and closes the store after. When a signal ended
// it, the error is an *interrupted, whose exit status is 128+N.
func oneShot(storeURL string, f func(ctx context.Context, st leasehold.Store) error) error {
	ctx, stop := signalContext()
	defer stop()
	err := func() error {
		st, err := openStore(ctx, storeURL)
		if err != nil {
			return err
		}
		defer st.Close()
		return f(ctx, st)
	}()
	var in *interrupted
	if err != nil && errors.As(context.Cause(ctx), &in) {
		return fmt.Errorf("%w (%w)", in, err)
	}
	return err
}

// interrupted is the cause of a one-shot command's context when a signal
// ended it.
type interrupted struct{ sig os.Signal }

func (e *interrupted) Error() string { return "interrupted by " + signalName(e.sig) }

// signalName names s as the shell and kill(1) do: SIGINT, not "interrupt".
func signalName(s os.Signal) string {
	names := map[os.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP", syscall.SIGQUIT: "SIGQUIT", syscall.SIGKILL: "SIGKILL"}
	if n, ok := names[s]; ok {
		return n
	}
	return s.String()
}

// signalContext returns a context that SIGINT and SIGTERM cancel with an
// *interrupted cause, and the function that stops listening.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			cancel(&interrupted{sig: s})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// grantJSON is acquire's --json output.
type grantJSON struct {
	Key   string `json:"key"`
	Owner string `json:"owner"`
	Token uint64 `json:"token"`
	Label string `json:"label"`
	TTL   string `json:"ttl"`
	TTLMS int64  `json:"ttl_ms"`
}

func (a *app) acquire(args []string) int {
	fs := newFlags("acquire")
	key := fs.String("key", "", "the lease's key")
	ttl := durationFlag(fs, "ttl", leasehold.DefaultTTL, "lease duration")
	wait := waitFlag(fs)
	label := fs.String("label", "", "how other holders see this one (default host:pid)")
	asJSON := jsonFlag(fs)
	store := clientStoreFlag(fs)
	if _, code, ok := a.parse(fs, "acquire", args); !ok {
		if code != exitOK && !a.jsonErrors {
			a.failClosed(code)
		}
		return code
	}
	err := errors.Join(checkKey(fs), checkTTL(*ttl), checkWait(*wait))
	if err != nil {
		return a.failAcquire(*asJSON, err)
	}
	if *label == "" {
		*label = leasehold.DefaultLabel()
	}
	var g leasehold.Grant
	err = oneShot(*store, func(ctx context.Context, st leasehold.Store) error {
		// A Claim, not a lease: the grant must outlive this process, and
		// nothing here renews it.
		c, err := leasehold.New(st, &leasehold.Options{Label: *label, TTL: *ttl, Observer: a.observer(nil)})
		if err != nil {
			return err
		}
		defer c.Close()
		g, err = c.Claim(ctx, *key, leasehold.AcquireOptions{Wait: *wait})
		return notPortable("acquire", err)
	})
	if err != nil {
		return a.failAcquire(*asJSON, err)
	}
	if *asJSON {
		return a.printJSON(grantJSON{Key: g.Key, Owner: g.Owner, Token: g.Token, Label: g.Label, TTL: g.TTL.String(), TTLMS: g.TTL.Milliseconds()})
	}
	// export, so that the renew and release commands that eval's shell
	// runs next see them.
	fmt.Fprintf(a.stdout, "export LEASEHOLD_KEY=%s\nexport LEASEHOLD_OWNER=%s\nexport LEASEHOLD_TOKEN=%d\n", shellQuote(g.Key), shellQuote(g.Owner), g.Token)
	return exitOK
}

// failAcquire reports acquire's error, and without --json prints the
// statement that keeps eval from going on without the lease.
func (a *app) failAcquire(asJSON bool, err error) int {
	code := a.fail("acquire", err)
	if !asJSON {
		a.failClosed(code)
	}
	return code
}

// failClosed prints, for eval "$(leasehold acquire KEY)", a statement that
// stops the script with acquire's exit status: a failed acquire that
// printed nothing would leave eval "" to succeed and the script to run its
// critical section without the lease, even under set -e. In an interactive
// shell the statement only fails, rather than closing the user's terminal
// (the error is on stderr).
func (a *app) failClosed(code int) {
	fmt.Fprintf(a.stdout, "case $- in *i*) false ;; *) exit %d ;; esac\n", code)
}

// grantFlags reads the key (first, or --key), --owner and --token of fs,
// or their LEASEHOLD_ variables.
func grantFlags(fs *flag.FlagSet, owner, token string) (leasehold.Grant, error) {
	g := leasehold.Grant{Key: orEnv(fs.Lookup("key").Value.String(), "LEASEHOLD_KEY"), Owner: orEnv(owner, "LEASEHOLD_OWNER")}
	switch {
	case g.Key == "" && flagGiven(fs, "key"):
		return g, errEmptyKey
	case g.Key == "":
		return g, usagef("the key is required: give it first, as --key KEY, or in LEASEHOLD_KEY")
	}
	if err := leasehold.ValidateKey(g.Key); err != nil {
		return g, err
	}
	if g.Owner == "" {
		return g, usagef("--owner is required (or set LEASEHOLD_OWNER)")
	}
	var err error
	g.Token, err = parseToken(orEnv(token, "LEASEHOLD_TOKEN"))
	return g, err
}

func (a *app) renew(args []string) int {
	fs := newFlags("renew")
	fs.String("key", "", "the lease's key")
	owner := fs.String("owner", "", "the owner printed by acquire")
	token := fs.String("token", "", "the token printed by acquire")
	ttl := durationFlag(fs, "ttl", leasehold.DefaultTTL, "the new lease duration, from now")
	store := clientStoreFlag(fs)
	jsonFlag(fs)
	if _, code, ok := a.parse(fs, "renew", args); !ok {
		return code
	}
	g, err := grantFlags(fs, *owner, *token)
	if err = errors.Join(err, checkTTL(*ttl)); err != nil {
		return a.fail("renew", err)
	}
	g.TTL = *ttl
	err = oneShot(*store, func(ctx context.Context, st leasehold.Store) error {
		if err := portable("renew", st); err != nil {
			return err
		}
		_, err := st.Renew(ctx, g) // the store checks the TTL against its bounds
		return err
	})
	if err != nil {
		return a.fail("renew", notHeld(g, err))
	}
	return exitOK
}

func (a *app) release(args []string) int {
	fs := newFlags("release")
	fs.String("key", "", "the lease's key")
	owner := fs.String("owner", "", "the owner printed by acquire")
	token := fs.String("token", "", "the token printed by acquire")
	store := clientStoreFlag(fs)
	jsonFlag(fs)
	if _, code, ok := a.parse(fs, "release", args); !ok {
		return code
	}
	g, err := grantFlags(fs, *owner, *token)
	if err != nil {
		return a.fail("release", err)
	}
	err = oneShot(*store, func(ctx context.Context, st leasehold.Store) error {
		if err := portable("release", st); err != nil {
			return err
		}
		return st.Release(ctx, g)
	})
	if err != nil {
		return a.fail("release", notHeld(g, err))
	}
	return exitOK
}

// portable refuses the one-shot commands on a store whose grants live in the
// acquiring process (Info.PortableGrants false): an acquire's grant would end
// with its exit, and a renew or release from another process cannot reach it.
func portable(cmd string, st leasehold.Store) error {
	if st.Info().PortableGrants {
		return nil
	}
	return notPortable(cmd, fmt.Errorf("%w: the %s store keeps a grant in the process that acquired it", leasehold.ErrNotPortable, st.Info().Name))
}

// notPortable adds to an ErrNotPortable what the user can do instead.
func notPortable(cmd string, err error) error {
	if !errors.Is(err, leasehold.ErrNotPortable) {
		return err
	}
	return fmt.Errorf("%w, so a one-shot %s cannot work (an acquire's lease would end when it exits); hold the lease for the whole job with leasehold run --key KEY -- COMMAND", err, cmd)
}

// notHeld says which grant a store refused.
func notHeld(g leasehold.Grant, err error) error {
	if errors.Is(err, leasehold.ErrNotHeld) {
		return fmt.Errorf("%w: the lease on %q with token %d is not held by this owner (it expired and was taken, or was released)", leasehold.ErrNotHeld, g.Key, g.Token)
	}
	return err
}

// printJSON writes v as one line of JSON.
func (a *app) printJSON(v any) int {
	if err := json.NewEncoder(a.stdout).Encode(v); err != nil {
		fmt.Fprintf(os.Stderr, "leasehold: %v\n", err)
		return exitFailure
	}
	return exitOK
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
