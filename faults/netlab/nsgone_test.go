package netlab_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// netnsID names a network namespace as the kernel does in /proc
// ("net:[4026532123]"), from the inode of a handle to it (a process's
// /proc/PID/ns/net, or an `ip netns` handle, an nsfs bind mount).
func netnsID(path string) (string, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return "", err
	}
	return fmt.Sprintf("net:[%d]", st.Ino), nil
}

// netnsHolders lists what still keeps namespace id alive, seen from the
// whole machine (the test shares the host's PID namespace, so /proc shows
// every process): a process whose network namespace it is, or a mount of
// its handle in any process's mount namespace. An empty list means the
// kernel has freed the namespace, with every veth and bridge in it.
func netnsHolders(id string) []string {
	var held []string
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		if l, err := os.Readlink(p + "/ns/net"); err == nil && l == id {
			held = append(held, p+" runs in it")
		}
		if b, err := os.ReadFile(p + "/mountinfo"); err == nil && strings.Contains(string(b), id) {
			held = append(held, p+" has its handle mounted")
		}
	}
	return held
}

// waitGone waits up to 30 s for namespace id to have no holder (a killed
// process's namespaces go once the kernel has reaped it).
func waitGone(t *testing.T, what, id string) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		held := netnsHolders(id)
		if len(held) == 0 {
			return
		}
		if time.Now().After(end) {
			t.Errorf("%s (%s) is still alive 30 s on: %s", what, id, strings.Join(held, "; "))
			return
		}
	}
}

func TestNetnsHoldersSeesALiveNamespace(t *testing.T) {
	id, err := netnsID("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	if held := netnsHolders(id); len(held) == 0 {
		t.Fatalf("netnsHolders(%s) found nothing, but this test runs in it", id)
	}
}
