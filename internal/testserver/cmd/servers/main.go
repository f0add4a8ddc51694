// Command servers starts throwaway servers for the repository's scripts
// (scripts/bench-page) through internal/testserver, the kit the tests use:
// the same binaries, flags, loopback ports and temporary folders.
//
//	servers [-dir DIR] [-keep-going] NAME=KIND[:ARG]...
//	servers -list
//
// Each NAME=KIND[:ARG] starts one server of KIND (-list names the kinds and
// what ARG means: for etcd, ZooKeeper and Consul the number of members),
// one after the other. NAME is a shell identifier, and KIND alone means
// KIND=KIND. For each server started it prints, on standard output,
//
//	NAME_ADDR=host:port[,host:port...]
//	NAME_URL=the store URL leasehold opens (redis://, postgres://, etcd://, ...)
//	NAME_PIDS=pid[,pid...]
//
// and a few more keys for Azurite, versitygw and dynalite (ENDPOINT, credentials),
// then READY once all are up. Values are not quoted: read each line with
// `IFS='=' read -r key value`. A server that cannot start stops the others
// and ends the command with status 1, or with -keep-going is printed as
// NAME_ERROR=the first line of its error, the rest on standard error.
//
// The command stays up until it gets SIGINT, SIGTERM or SIGHUP, or its
// standard input closes (a script holds it open, so that its own end stops
// the servers), then stops every server, removes the folder it made, and
// exits. Each server runs in its own process group and is killed by the
// kernel if the command dies without stopping it (Linux).
//
// Binaries are found as the tests find them: $LEASEHOLD_BIN (default
// ~/.cache/leasehold/bin), PATH, then a few system folders; a missing one
// is an error naming its install script (scripts/install/*.sh).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// spec is one NAME=KIND[:ARG] argument.
type spec struct {
	name string
	kind kind
	arg  string
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// parseSpecs parses the NAME=KIND[:ARG] arguments.
func parseSpecs(args []string) ([]spec, error) {
	if len(args) == 0 {
		return nil, errors.New("no server named")
	}
	var specs []spec
	seen := map[string]bool{}
	for _, a := range args {
		name, rest, ok := strings.Cut(a, "=")
		if !ok {
			rest = a
			name, _, _ = strings.Cut(a, ":")
		}
		k, arg, _ := strings.Cut(rest, ":")
		if !identifier.MatchString(name) {
			return nil, fmt.Errorf("%q: the name %q is not a shell identifier", a, name)
		}
		if seen[name] {
			return nil, fmt.Errorf("%q: the name %q is given twice", a, name)
		}
		seen[name] = true
		kd, ok := findKind(k)
		if !ok {
			return nil, fmt.Errorf("%q: no server kind %q (servers -list names them)", a, k)
		}
		if arg != "" && kd.arg == "" {
			return nil, fmt.Errorf("%q: %s takes no argument", a, k)
		}
		specs = append(specs, spec{name: name, kind: kd, arg: arg})
	}
	return specs, nil
}

// run is the command: it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("servers", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "the folder the servers keep their data and logs in (made if missing, kept); default a new temporary folder, removed at exit")
	keepGoing := fs.Bool("keep-going", false, "a server that cannot start is printed as NAME_ERROR=... and the others run")
	list := fs.Bool("list", false, "list the kinds of server and exit")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: servers [-dir DIR] [-keep-going] NAME=KIND[:ARG]...\n       servers -list")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *list {
		for _, k := range kinds() {
			fmt.Fprintf(stdout, "%s\t%s", k.name, k.about)
			if k.arg != "" {
				fmt.Fprintf(stdout, "; ARG: %s", k.arg)
			}
			fmt.Fprintln(stdout)
		}
		return 0
	}
	specs, err := parseSpecs(fs.Args())
	if err != nil {
		fmt.Fprintln(stderr, "servers:", err)
		fs.Usage()
		return 2
	}
	base, cleanup, err := workDir(*dir)
	if err != nil {
		fmt.Fprintln(stderr, "servers:", err)
		return 1
	}
	defer cleanup()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	ctx, closed := context.WithCancel(ctx)
	go func() { // standard input's end stops the servers
		_, _ = io.Copy(io.Discard, stdin)
		closed()
	}()
	started, ok := startAll(ctx, base, specs, *keepGoing, stdout, stderr)
	defer stopAll(started)
	if !ok {
		return 1
	}
	fmt.Fprintln(stdout, "READY")
	<-ctx.Done()
	return 0
}

// workDir makes the servers' folder: dir, or a new temporary one that
// cleanup removes.
func workDir(dir string) (string, func(), error) {
	if dir != "" {
		return dir, func() {}, os.MkdirAll(dir, 0o755)
	}
	d, err := os.MkdirTemp("", "leasehold-servers-")
	if err != nil {
		return "", nil, err
	}
	return d, func() { _ = os.RemoveAll(d) }, nil
}

// startAll starts the servers one after the other and prints their keys.
// It returns the servers started, and false when one could not start
// (without keepGoing) or ctx ended.
func startAll(ctx context.Context, base string, specs []spec, keepGoing bool, stdout, stderr io.Writer) ([]*server, bool) {
	var started []*server
	for _, sp := range specs {
		dir := filepath.Join(base, sp.name)
		err := os.MkdirAll(dir, 0o755)
		var s *server
		if err == nil {
			s, err = sp.kind.start(ctx, dir, sp.arg)
		}
		if ctx.Err() != nil {
			if s != nil {
				started = append(started, s)
			}
			fmt.Fprintf(stderr, "servers: stopped while starting %s\n", sp.name)
			return started, false
		}
		if err != nil {
			fmt.Fprintf(stderr, "servers: %s (%s): %v\n", sp.name, sp.kind.name, err)
			if !keepGoing {
				return started, false
			}
			first, _, _ := strings.Cut(err.Error(), "\n")
			fmt.Fprintf(stdout, "%s_ERROR=%s\n", sp.name, first)
			continue
		}
		started = append(started, s)
		for _, kv := range s.vars {
			fmt.Fprintf(stdout, "%s_%s=%s\n", sp.name, kv[0], kv[1])
		}
		fmt.Fprintf(stderr, "servers: %s (%s) at %s\n", sp.name, sp.kind.name, s.vars[0][1])
	}
	return started, true
}

// stopAll stops the servers at once and returns when all are gone.
func stopAll(ss []*server) {
	var wg sync.WaitGroup
	for _, s := range ss {
		wg.Go(s.stop)
	}
	wg.Wait()
}
