package storeurl

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// leftOutTags are the build tags of every store that one can leave out.
func leftOutTags() []string {
	var tags []string
	for _, k := range Stores() {
		if k.BuildTag != "" && !contains(tags, k.BuildTag) {
			tags = append(tags, k.BuildTag)
		}
	}
	return tags
}

// goCmd runs the go command in dir, against that module's own go.mod.
func goCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// TestEachBuildTagBuilds builds this package with each store's build tag
// alone: every <store>_leftout.go stands in for its row.
func TestEachBuildTagBuilds(t *testing.T) {
	for _, tag := range leftOutTags() {
		goCmd(t, ".", "build", "-tags", tag, ".")
	}
}

// TestLeftOutBinary builds the leasehold command with every store that a
// build tag can leave out left out, and checks that their client libraries
// are not in the binary, and that each of their schemes is refused with
// an error that names the store and its tag, as a usage error (exit 2).
func TestLeftOutBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "leasehold")
	goCmd(t, filepath.Join(root, "cmd"), "build", "-tags", strings.Join(leftOutTags(), ","), "-o", bin, "./leasehold")
	deps := goCmd(t, ".", "version", "-m", bin)
	for _, k := range Stores() {
		if k.BuildTag == "" {
			continue
		}
		if mod := modulePath + "/" + moduleOf(t, k.Package); strings.Contains(deps, "\t"+mod+"\t") {
			t.Errorf("the binary built without %s holds its module %s", k.Name, mod)
		}
		for _, s := range k.Schemes {
			out, err := exec.Command(bin, "migrate", "--store", s+"://127.0.0.1:1/x").CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 ||
				!strings.Contains(string(out), "built without "+k.Name+" ") || !strings.Contains(string(out), k.BuildTag) {
				t.Errorf("leasehold migrate --store %s://... = %v:\n%s\nwant exit 2 and an error naming %s and %s", s, err, out, k.Name, k.BuildTag)
			}
		}
	}
	for _, lib := range []string{"github.com/Azure/", "github.com/aws/", "github.com/redis/go-redis", "github.com/jackc/pgx", "go.etcd.io/", "github.com/hashicorp/consul", "github.com/go-zookeeper/", "k8s.io/"} {
		if strings.Contains(deps, "\t"+lib) {
			t.Errorf("the binary built without every optional store holds %s:\n%s", lib, deps)
		}
	}
}

// TestLeftOutError checks the error of a left-out store's URL.
func TestLeftOutError(t *testing.T) {
	k := leftOut("azblob", "Azure Blob", "leasehold_no_azblob", "azblob")
	if !k.LeftOut || k.Open != nil || !strings.Contains(k.Usage, "leasehold_no_azblob") {
		t.Errorf("leftOut row = %+v", k)
	}
	err := leftOutError(k, "azblob")
	if !errors.Is(err, ErrLeftOut) || !errors.Is(err, ErrUnknownScheme) || errors.Is(err, ErrBadURL) {
		t.Errorf("%v: want ErrLeftOut and ErrUnknownScheme", err)
	}
	for _, want := range []string{"this binary was built without azblob", "-tags leasehold_no_azblob", "azblob://", "supported schemes: sqlite"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}
