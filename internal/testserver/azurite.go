package testserver

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// AzuriteAccount and AzuriteKey are Azurite's well-known development
// account and its shared key (public, the same in every Azurite).
const (
	AzuriteAccount = "devstoreaccount1"
	AzuriteKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// AzuriteOptions configure an Azurite blob service. The zero value is a
// service with in-memory persistence, its logs in a new folder under the
// system's temporary folder.
type AzuriteOptions struct {
	// Dir is the folder the server's own folder is made in; "" means the
	// system's temporary folder.
	Dir string
	// OnDisk keeps the blobs in the server's folder (--location) instead
	// of in memory, so that they survive a restart. Azurite saves its
	// metadata every 5 s and when it stops on SIGTERM or SIGINT: after a
	// SIGKILL the last seconds of writes are gone, so stop it with
	// [Azurite.Shutdown] before a restart that must keep them.
	OnDisk bool
	// Args are more arguments, after the defaults.
	Args []string
	// Env is added to the server's environment.
	Env []string
}

// Azurite is a running azurite-blob on 127.0.0.1 (blob service only).
type Azurite struct {
	*Process
	Port int
	Dir  string // the server's folder: its logs
}

// StartAzurite starts azurite-blob on a free loopback port, in memory
// unless opts.OnDisk, and waits until its blob endpoint answers HTTP. A
// port taken meanwhile is retried with another.
func StartAzurite(ctx context.Context, opts AzuriteOptions) (*Azurite, error) {
	bin, err := FindBin("azurite-blob", "azurite.sh")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(opts.Dir, "leasehold-azurite-")
	if err != nil {
		return nil, err
	}
	persist := []string{"--inMemoryPersistence"}
	if opts.OnDisk {
		persist = []string{"--location", filepath.Join(dir, "data")}
	}
	for range 5 {
		var port int
		if port, err = FreePort(); err != nil {
			break
		}
		a := &Azurite{Port: port, Dir: dir}
		a.Process = NewProcess(Spec{
			Name: "azurite-blob on port " + strconv.Itoa(port),
			Path: bin,
			Args: append([]string{
				"--blobHost", "127.0.0.1", "--blobPort", strconv.Itoa(port),
				"--skipApiVersionCheck", "--disableTelemetry", "--loose",
			}, append(persist, opts.Args...)...),
			Env:   opts.Env,
			Log:   filepath.Join(dir, "stdout.log"),
			Probe: func(ctx context.Context) error { return answersHTTP(ctx, a.BlobEndpoint()+"?comp=list") },
		})
		if err = a.Start(ctx); err == nil {
			return a, nil
		}
		if !errors.Is(err, ErrExited) {
			break
		}
	}
	_ = os.RemoveAll(dir)
	return nil, err
}

// NewAzurite starts Azurite for t (failing t if it cannot) and stops it
// when t ends.
func NewAzurite(t testing.TB, opts AzuriteOptions) *Azurite {
	t.Helper()
	a, err := StartAzurite(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	return a
}

// answersHTTP is a probe that is ready once url answers HTTP at all: an
// unauthenticated request gets an error status, which still says the
// server is serving (Azurite, versitygw).
func answersHTTP(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := httpClient().Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// Addr returns host:port.
func (a *Azurite) Addr() string { return "127.0.0.1:" + strconv.Itoa(a.Port) }

// BlobEndpoint returns the development account's blob service URL.
func (a *Azurite) BlobEndpoint() string {
	return "http://" + a.Addr() + "/" + AzuriteAccount
}

// ConnectionString returns a connection string for the development
// account on this server.
func (a *Azurite) ConnectionString() string {
	return "DefaultEndpointsProtocol=http;AccountName=" + AzuriteAccount +
		";AccountKey=" + AzuriteKey + ";BlobEndpoint=" + a.BlobEndpoint() + ";"
}

// Shutdown stops the server the way Azurite saves its data: SIGTERM, then
// up to grace for it to close its database and exit, then SIGKILL. Its
// folder stays, for a restart (Restart) on the same port and data.
func (a *Azurite) Shutdown(grace time.Duration) { a.Halt(syscall.SIGTERM, grace) }

// Stop kills the server and removes its folder. With in-memory persistence
// there is nothing to shut down gracefully.
func (a *Azurite) Stop() {
	a.Kill()
	_ = os.RemoveAll(a.Dir)
}
