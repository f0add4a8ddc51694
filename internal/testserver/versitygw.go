package testserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// VersityAccessKey and VersitySecretKey are the root credentials every
// versitygw started here accepts (test servers only; never a real secret).
const (
	VersityAccessKey = "leaseholdtest"
	VersitySecretKey = "leaseholdtestsecret"
	VersityRegion    = "us-east-1"
)

// VersityOptions configure a versitygw S3 gateway. The zero value is a
// gateway over a new folder under the system's temporary folder, with no
// bucket.
type VersityOptions struct {
	// Dir is the folder the server's own folder is made in; "" means the
	// system's temporary folder.
	Dir string
	// Buckets are made before the server starts.
	Buckets []string
	// Args are more global arguments, before the backend's name.
	Args []string
	// Env is added to the server's environment.
	Env []string
}

// Versity is a running versitygw (posix backend) on 127.0.0.1.
type Versity struct {
	*Process
	Port int
	Dir  string // the server's folder: its log, and data/ (one folder per bucket)
}

// StartVersity starts `versitygw --port 127.0.0.1:P posix DIR/data` with
// the root credentials VersityAccessKey and VersitySecretKey, and waits
// until it answers HTTP. A port taken meanwhile is retried with another.
func StartVersity(ctx context.Context, opts VersityOptions) (*Versity, error) {
	bin, err := FindBin("versitygw", "versitygw.sh")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(opts.Dir, "leasehold-versitygw-")
	if err != nil {
		return nil, err
	}
	v := &Versity{Dir: dir}
	for _, b := range append([]string{""}, opts.Buckets...) {
		if err = os.MkdirAll(filepath.Join(v.DataDir(), b), 0o755); err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
	for range 5 {
		if v.Port, err = FreePort(); err != nil {
			break
		}
		args := append([]string{"--port", v.Addr(), "--quiet", "--keep-alive", "--region", VersityRegion}, opts.Args...)
		v.Process = NewProcess(Spec{
			Name: "versitygw on port " + strconv.Itoa(v.Port),
			Path: bin,
			Args: append(args, "posix", v.DataDir()),
			Env: append([]string{
				"ROOT_ACCESS_KEY_ID=" + VersityAccessKey, "ROOT_SECRET_ACCESS_KEY=" + VersitySecretKey,
			}, opts.Env...),
			Log:   filepath.Join(dir, "stdout.log"),
			Probe: func(ctx context.Context) error { return answersHTTP(ctx, v.Endpoint()+"/") },
		})
		if err = v.Start(ctx); err == nil {
			return v, nil
		}
		if !errors.Is(err, ErrExited) {
			break
		}
	}
	_ = os.RemoveAll(dir)
	return nil, err
}

// NewVersity starts versitygw for t (failing t if it cannot) and stops it
// when t ends.
func NewVersity(t testing.TB, opts VersityOptions) *Versity {
	t.Helper()
	v, err := StartVersity(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Stop)
	return v
}

// Addr returns host:port.
func (v *Versity) Addr() string { return "127.0.0.1:" + strconv.Itoa(v.Port) }

// Endpoint returns the gateway's URL, for path-style S3 clients.
func (v *Versity) Endpoint() string { return "http://" + v.Addr() }

// DataDir returns the folder the posix backend serves: one folder per
// bucket.
func (v *Versity) DataDir() string { return filepath.Join(v.Dir, "data") }

// CreateBucket makes bucket name, as the posix backend keeps it (a folder
// under DataDir), so the test needs no S3 client of its own. A bucket made
// this way has no ACL of its own; the root credentials reach it.
func (v *Versity) CreateBucket(name string) error {
	if name == "" || filepath.Base(name) != name {
		return fmt.Errorf("testserver: bad bucket name %q", name)
	}
	return os.MkdirAll(filepath.Join(v.DataDir(), name), 0o755)
}

// Stop stops the gateway and removes its folder.
func (v *Versity) Stop() {
	v.Process.Stop()
	_ = os.RemoveAll(v.Dir)
}
