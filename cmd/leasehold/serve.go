package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"github.com/leasehold-go/leasehold/serve"
)

// serveFlags are serve's flags.
type serveFlags struct {
	store, listen, cert, key *string
	insecure, asJSON         *bool
}

func (a *app) serve(args []string) int {
	fs := newFlags("serve")
	f := serveFlags{
		store:    storeFlag(fs),
		listen:   fs.String("listen", "", "HOST:PORT to listen on (port 0: any free port)"),
		cert:     fs.String("tls-cert", "", "the server's TLS certificate (PEM file)"),
		key:      fs.String("tls-key", "", "its private key (PEM file)"),
		insecure: fs.Bool("insecure-loopback", false, "serve plain HTTP, on a loopback address only"),
		asJSON:   jsonFlag(fs),
	}
	if _, code, ok := a.parse(fs, "serve", args); !ok {
		return code
	}
	if err := checkServeFlags(f); err != nil {
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
	srv := serve.New(st, nil)
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
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
// and there only when asked for by --insecure-loopback.
func checkServeFlags(f serveFlags) error {
	tls := *f.cert != "" || *f.key != ""
	switch {
	case *f.listen == "":
		return usagef("--listen HOST:PORT is required")
	case tls && (*f.cert == "" || *f.key == ""):
		return usagef("give both --tls-cert and --tls-key")
	case tls && *f.insecure:
		return usagef("give --tls-cert and --tls-key, or --insecure-loopback, not both")
	case !tls && !*f.insecure:
		return usagef("leasehold serve needs TLS (--tls-cert and --tls-key); plain HTTP is served only on a loopback address, with --insecure-loopback")
	}
	if !*f.insecure {
		return nil
	}
	host, _, err := net.SplitHostPort(*f.listen)
	if err != nil {
		return usagef("--listen %q: %v", *f.listen, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return usagef("--insecure-loopback serves plain HTTP on a loopback address only (127.0.0.1, ::1, localhost), not on %q; give --tls-cert and --tls-key to serve other addresses", *f.listen)
	}
	return nil
}
