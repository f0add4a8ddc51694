package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold/internal/testserver"
)

// A store that cannot be opened (no server on the port, a bucket that
// does not exist, wrong credentials, no connection string) is a clear
// error and exit status 1 from every command that opens a store, never a
// panic (a typed nil store's Close once was one).
func TestUnopenableStores(t *testing.T) {
	port, err := testserver.FreePort() // nothing listens there
	if err != nil {
		t.Fatal(err)
	}
	closed := fmt.Sprintf("127.0.0.1:%d", port)
	v := testserver.NewVersity(t, testserver.VersityOptions{})
	creds := "&region=" + testserver.VersityRegion + "&access_key=" + testserver.VersityAccessKey + "&secret_key="
	if err := v.CreateBucket("there"); err != nil {
		t.Fatal(err)
	}
	stores := []struct{ url, want string }{
		{"s3://no-such-bucket/lh?endpoint=http://" + closed + creds + "x", closed},
		{"s3://no-such-bucket/lh?endpoint=" + v.Endpoint() + creds + testserver.VersitySecretKey, "bucket does not exist"},
		{"s3://there/lh?endpoint=" + v.Endpoint() + creds + "wrong", "credentials were refused"},
		{"zk://" + closed + "/x?dial_timeout=1s", closed},
		{"azblob://acct/c?auth=connstr", "AZURE_STORAGE_CONNECTION_STRING"},
	}
	e := newEnv(t)
	noEnv := []string{"AZURE_STORAGE_CONNECTION_STRING=", "AWS_CONFIG_FILE=/nonexistent", "AWS_SHARED_CREDENTIALS_FILE=/nonexistent"}
	for _, s := range stores {
		for _, args := range [][]string{
			{"run", "--store", s.url, "--key", "k", "--", "true"},
			{"acquire", "--store", s.url, "--key", "k"},
			{"status", "--store", s.url, "--key", "k"},
			{"release", "--store", s.url, "--key", "k", "--owner", "o", "--token", "1"},
		} {
			code, out, stderr := e.lh(noEnv, args...)
			prefix := "leasehold " + args[0] + ": "
			if code != exitFailure || !strings.HasPrefix(stderr, prefix) || !strings.Contains(stderr, s.want) || strings.Contains(stderr, "panic") {
				t.Errorf("leasehold %s exited %d, want %d with %q naming %q and no panic; stderr:\n%s", strings.Join(args, " "), code, exitFailure, prefix, s.want, stderr)
			}
			if strings.Contains(out, "export LEASEHOLD_TOKEN") {
				t.Errorf("leasehold %s printed a grant: %q", args[0], out)
			}
		}
	}
}

// An explicit sqlite store in a folder that does not exist is an error
// naming the folder, from every command, and creates nothing; the default
// store (no --store, no LEASEHOLD_STORE) creates its folder on first use.
func TestSQLiteFolderMustExist(t *testing.T) {
	e := newEnv(t)
	dir := filepath.Join(e.dir, "no", "such", "dir")
	store := "sqlite://" + filepath.Join(dir, "x.db")
	for _, args := range [][]string{
		{"run", "--store", store, "--key", "k", "--", "true"},
		{"acquire", "--store", store, "--key", "k"},
		{"release", "--store", store, "--key", "k", "--owner", "o", "--token", "1"},
		{"migrate", "--store", store},
	} {
		code, _, stderr := e.lh(nil, args...)
		if code != exitFailure || !strings.Contains(stderr, dir) || !strings.Contains(stderr, "does not exist") {
			t.Errorf("leasehold %s exited %d, want %d naming the folder %s; stderr:\n%s", strings.Join(args, " "), code, exitFailure, dir, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(e.dir, "no")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a folder was created: stat %s: %v", filepath.Join(e.dir, "no"), err)
	}
	code, _, stderr := e.lh([]string{"LEASEHOLD_STORE="}, "run", "--key", "k", "--", "true")
	if def := filepath.Join(e.dir, "state", "leasehold", "leases.db"); code != 0 || !fileExists(def) {
		t.Errorf("run on the default store exited %d (created %s: %v): %s", code, def, fileExists(def), stderr)
	}
}
