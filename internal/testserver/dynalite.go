package testserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// DynaliteRegion and the Dynalite credentials are what tests sign with:
// dynalite checks that a request is signed but not the signature, so any
// key works; these are never a real secret.
const (
	DynaliteRegion    = "us-east-1"
	DynaliteAccessKey = "leaseholdtest"
	DynaliteSecretKey = "leaseholdtestsecret"
)

// DynaliteOptions configure a dynalite DynamoDB server. The zero value is
// a server that keeps its tables in memory, its log in a new folder under
// the system's temporary folder.
type DynaliteOptions struct {
	// Dir is the folder the server's own folder is made in; "" means the
	// system's temporary folder.
	Dir string
	// OnDisk keeps the tables in a LevelDB under the server's folder
	// (--path) instead of in memory, so that they survive a restart.
	OnDisk bool
	// Args are more arguments, after the defaults.
	Args []string
}

// Dynalite is a running dynalite on 127.0.0.1, whose tables become active
// at once (--createTableMs 0).
type Dynalite struct {
	*Process
	Port int
	Dir  string // the server's folder: its log, and data/ when on disk
}

// StartDynalite starts dynalite on a free loopback port, in memory unless
// opts.OnDisk, and waits until it answers HTTP. A port taken meanwhile is
// retried with another.
func StartDynalite(ctx context.Context, opts DynaliteOptions) (*Dynalite, error) {
	bin, err := FindBin("dynalite", "dynalite.sh")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(opts.Dir, "leasehold-dynalite-")
	if err != nil {
		return nil, err
	}
	var persist []string
	if opts.OnDisk {
		persist = []string{"--path", filepath.Join(dir, "data")}
	}
	for range 5 {
		var port int
		if port, err = FreePort(); err != nil {
			break
		}
		d := &Dynalite{Port: port, Dir: dir}
		d.Process = NewProcess(Spec{
			Name: "dynalite on port " + strconv.Itoa(port),
			Path: bin,
			Args: append(append([]string{
				"--host", "127.0.0.1", "--port", strconv.Itoa(port),
				"--createTableMs", "0", "--deleteTableMs", "0", "--updateTableMs", "0",
			}, persist...), opts.Args...),
			Log:   filepath.Join(dir, "stdout.log"),
			Probe: func(ctx context.Context) error { return answersHTTP(ctx, d.Endpoint()+"/") },
		})
		if err = d.Start(ctx); err == nil {
			return d, nil
		}
		if !errors.Is(err, ErrExited) {
			break
		}
	}
	_ = os.RemoveAll(dir)
	return nil, err
}

// NewDynalite starts dynalite for t (failing t if it cannot, a missing
// binary included) and stops it when t ends.
func NewDynalite(t testing.TB, opts DynaliteOptions) *Dynalite {
	t.Helper()
	d, err := StartDynalite(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	return d
}

// Addr returns host:port.
func (d *Dynalite) Addr() string { return "127.0.0.1:" + strconv.Itoa(d.Port) }

// Endpoint returns the server's URL.
func (d *Dynalite) Endpoint() string { return "http://" + d.Addr() }

// CreateTable makes table name the way the dynamodb store's migration
// does (a partition key "key" of type S, billed per request), so that a
// caller needs no DynamoDB client of its own.
func (d *Dynalite) CreateTable(ctx context.Context, name string) error {
	return createDynamoTable(ctx, "dynalite", d.Endpoint(), name)
}

// createDynamoTable makes table name on the DynamoDB-compatible server at
// endpoint as the dynamodb store's migration does. The request is signed
// in form only: dynalite checks that a request is signed, not the
// signature, and kumo checks neither.
func createDynamoTable(ctx context.Context, server, endpoint, name string) error {
	body := `{"TableName":` + strconv.Quote(name) + `,"BillingMode":"PAY_PER_REQUEST",` +
		`"KeySchema":[{"AttributeName":"key","KeyType":"HASH"}],"AttributeDefinitions":[{"AttributeName":"key","AttributeType":"S"}]}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint+"/", strings.NewReader(body))
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810.CreateTable")
	req.Header.Set("X-Amz-Date", now.Format("20060102T150405Z"))
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+DynaliteAccessKey+"/"+now.Format("20060102")+"/"+DynaliteRegion+
		"/dynamodb/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature=0")
	resp, err := httpClient().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("testserver: %s: create table %s: %s %s", server, name, resp.Status, out)
	}
	return nil
}

// Stop kills the server and removes its folder.
func (d *Dynalite) Stop() {
	d.Kill()
	_ = os.RemoveAll(d.Dir)
}
