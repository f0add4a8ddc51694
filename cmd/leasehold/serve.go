package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/leasehold-go/leasehold/serve"
)

// serveFlags are serve's flags.
type serveFlags struct {
	store, listen, cert, key, tokens *string
	clientCA                         *string
	insecure, asJSON                 *bool
	limits                           serveLimits
}

func (a *app) serve(args []string) int {
	fs := newFlags("serve")
	f := serveFlags{
		store:    storeFlag(fs),
		listen:   fs.String("listen", "", "HOST:PORT to listen on (port 0: any free port)"),
		cert:     fs.String("tls-cert", "", "the server's TLS certificate (PEM file)"),
		key:      fs.String("tls-key", "", "its private key (PEM file)"),
		clientCA: fs.String("tls-client-ca", "", "ask clients for a certificate and verify it against these CAs (PEM file); the token file's cert: rules name them"),
		tokens:   fs.String("token-file", "", "the bearer tokens the server accepts and their rules; reloaded on SIGHUP"),
		insecure: fs.Bool("insecure-loopback", false, "serve plain HTTP, on a loopback address only"),
		asJSON:   jsonFlag(fs),
		limits:   limitFlags(fs),
	}
	if _, code, ok := a.parse(fs, "serve", args); !ok {
		return code
	}
	if err := checkServeFlags(f); err != nil {
		return a.fail("serve", err)
	}
	tlsConfig, err := clientCATLS(*f.clientCA)
	if err != nil {
		return a.fail("serve", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	st, err := openStore(ctx, *f.store)
	if err != nil {
		return a.fail("serve", err)
	}
	defer st.Close()
	ln, err := net.Listen("tcp", *f.listen)
	if err != nil {
		return a.fail("serve", err)
	}
	scheme := "https"
	if *f.insecure {
		scheme = "http"
	}
	// The audit lines (who broke which lease) go to stderr whatever
	// $LEASEHOLD_LOG says.
	metrics := newServeCollector()
	opts := &serve.Options{Logger: slog.New(slog.NewTextHandler(a.stderr, nil)), MetricsHandler: metrics.handler()}
	f.limits.apply(opts)
	if *f.tokens != "" {
		if opts.Tokens, err = serve.LoadTokens(*f.tokens); err != nil {
			return a.fail("serve", err)
		}
		stopReload := a.reloadOnHUP(opts.Tokens, *f.tokens)
		defer stopReload()
	}
	srv := serve.New(st, opts)
	metrics.srv = srv
	hs := f.limits.httpServer(srv)
	hs.TLSConfig = tlsConfig
	done := make(chan error, 1)
	go func() {
		if *f.insecure {
			done <- hs.Serve(ln)
		} else {
			done <- hs.ServeTLS(ln, *f.cert, *f.key)
		}
	}()
	a.announce(scheme+"://"+ln.Addr().String(), st.Info().Name, *f.asJSON)
	select {
	case err = <-done: // the certificate could not be loaded, or the listener broke
	case <-ctx.Done():
	}
	_ = srv.Close() // ends the watch streams, releases the grants it keeps
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return a.fail("serve", err)
	}
	return exitOK
}

// reloadOnHUP loads the token file again on each SIGHUP; a file that
// cannot be loaded leaves the tokens as they were, and says so on stderr.
// It returns the function that stops it.
func (a *app) reloadOnHUP(tokens *serve.Tokens, path string) func() {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-hup:
				if err := tokens.Load(path); err != nil {
					fmt.Fprintf(a.stderr, "leasehold serve: the tokens stay as they were: %v\n", err)
				} else {
					fmt.Fprintf(a.stderr, "leasehold serve: reloaded the tokens of %s\n", path)
				}
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(hup); close(done) }
}

// announce prints the URL the server serves, once it listens: a line for
// people, or with --json one JSON object.
func (a *app) announce(url, store string, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(map[string]string{"url": url, "store": store})
		fmt.Fprintln(a.stdout, string(b))
		return
	}
	fmt.Fprintf(a.stdout, "leasehold serve: serving the %s store on %s (store URL leasehold+%s)\n", store, url, url)
}

// checkServeFlags refuses a server without TLS anywhere but on loopback,
// and there only when asked for by --insecure-loopback; and one without
// tokens anywhere but on loopback.
func checkServeFlags(f serveFlags) error {
	if err := f.limits.check(); err != nil {
		return err
	}
	tls := *f.cert != "" || *f.key != ""
	switch {
	case *f.listen == "":
		return usagef("--listen HOST:PORT is required")
	case tls && (*f.cert == "" || *f.key == ""):
		return usagef("give both --tls-cert and --tls-key")
	case tls && *f.insecure:
		return usagef("give --tls-cert and --tls-key, or --insecure-loopback, not both")
	case *f.clientCA != "" && (!tls || *f.tokens == ""):
		return usagef("--tls-client-ca needs --tls-cert and --tls-key (client certificates are a TLS handshake's) and --token-file (its cert: rules say what each certificate may do)")
	case !tls && !*f.insecure:
		return usagef("leasehold serve needs TLS (--tls-cert and --tls-key); plain HTTP is served only on a loopback address, with --insecure-loopback")
	}
	host, _, err := net.SplitHostPort(*f.listen)
	if err != nil {
		return usagef("--listen %q: %v", *f.listen, err)
	}
	ip := net.ParseIP(host)
	loopback := host == "localhost" || (ip != nil && ip.IsLoopback())
	switch {
	case *f.insecure && !loopback:
		return usagef("--insecure-loopback serves plain HTTP on a loopback address only (127.0.0.1, ::1, localhost), not on %q; give --tls-cert and --tls-key to serve other addresses", *f.listen)
	case !loopback && *f.tokens == "":
		return usagef("a server on %q, off loopback, needs --token-file: who may do what is denied by default", *f.listen)
	}
	return nil
}
