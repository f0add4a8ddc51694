package testserver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// Kumo is a running kumo (github.com/sivchari/kumo, an AWS emulator in Go)
// on 127.0.0.1, its tables in memory: the second DynamoDB implementation
// the dynamodb store's conformance is cross-checked on. It accepts any
// credentials; sign with the Dynalite ones.
type Kumo struct {
	*Process
	Port int
	Dir  string // the server's folder: its log
}

// StartKumo starts kumo on a free loopback port and waits until it answers
// HTTP. A port taken meanwhile is retried with another.
func StartKumo(ctx context.Context) (*Kumo, error) {
	bin, err := FindBin("kumo", "kumo.sh")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "leasehold-kumo-")
	if err != nil {
		return nil, err
	}
	for range 5 {
		var port int
		if port, err = FreePort(); err != nil {
			break
		}
		k := &Kumo{Port: port, Dir: dir}
		k.Process = NewProcess(Spec{
			Name:  "kumo on port " + strconv.Itoa(port),
			Path:  bin,
			Env:   []string{"KUMO_HOST=127.0.0.1", "KUMO_PORT=" + strconv.Itoa(port), "KUMO_LOG_LEVEL=warn", "KUMO_DATA_DIR="},
			Log:   filepath.Join(dir, "stdout.log"),
			Probe: func(ctx context.Context) error { return answersHTTP(ctx, k.Endpoint()+"/") },
		})
		if err = k.Start(ctx); err == nil {
			return k, nil
		}
		if !errors.Is(err, ErrExited) {
			break
		}
	}
	_ = os.RemoveAll(dir)
	return nil, err
}

// NewKumo starts kumo for t (failing t if it cannot, a missing binary
// included) and stops it when t ends.
func NewKumo(t testing.TB) *Kumo {
	t.Helper()
	k, err := StartKumo(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Stop)
	return k
}

// Addr returns host:port.
func (k *Kumo) Addr() string { return "127.0.0.1:" + strconv.Itoa(k.Port) }

// Endpoint returns the server's URL.
func (k *Kumo) Endpoint() string { return "http://" + k.Addr() }

// CreateTable makes table name as the dynamodb store's migration does.
func (k *Kumo) CreateTable(ctx context.Context, name string) error {
	return createDynamoTable(ctx, "kumo", k.Endpoint(), name)
}

// Stop kills the server and removes its folder.
func (k *Kumo) Stop() {
	k.Kill()
	_ = os.RemoveAll(k.Dir)
}
