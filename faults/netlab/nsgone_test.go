package netlab_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// nsRef names one network namespace for as long as the machine runs. id is
// how /proc names it ("net:[4026532123]", the inode of its handle), but the
// kernel hands a freed namespace's inode to the next namespace made, and
// the tests of other packages make them all the time (the harness's
// labs), so the inode alone can name a stranger seconds after the
// namespace it named is gone. cookie (SO_NETNS_COOKIE) is never reused:
// a handle with the same inode and another cookie is a later namespace.
type nsRef struct {
	id     string
	cookie uint64
}

func (r nsRef) String() string { return fmt.Sprintf("%s, cookie %d", r.id, r.cookie) }

// netnsRef names the namespace behind a handle to it (a process's
// /proc/PID/ns/net, or an `ip netns` handle, an nsfs bind mount).
func netnsRef(path string) (nsRef, error) {
	id, err := netnsID(path)
	if err != nil {
		return nsRef{}, err
	}
	cookie, err := netnsCookie(path)
	if err != nil {
		return nsRef{}, err
	}
	return nsRef{id: id, cookie: cookie}, nil
}

// netnsID names a network namespace as the kernel does in /proc, from the
// inode of a handle to it.
func netnsID(path string) (string, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return "", err
	}
	return fmt.Sprintf("net:[%d]", st.Ino), nil
}

// netnsCookie reads the cookie of the namespace behind a handle: a thread
// locked to a goroutine of its own joins the namespace, asks a socket made
// there, and goes back. Should it fail to go back, the thread stays locked
// and exits with the goroutine, so no other goroutine ever runs in that
// namespace. The thread is never the process's main one (TestMain keeps
// that for itself): a main thread left locked is kept, not ended, and
// /proc/PID/ns/net, which names the main thread's namespace, would then
// show the test itself holding the namespace.
func netnsCookie(path string) (uint64, error) {
	type result struct {
		cookie uint64
		err    error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		c, back, err := cookieHere(path)
		if back {
			runtime.UnlockOSThread()
		}
		ch <- result{c, err}
	}()
	r := <-ch
	return r.cookie, r.err
}

// cookieHere moves the calling (locked) thread into the namespace behind
// path and returns that namespace's cookie, and whether the thread is back
// in its own namespace.
func cookieHere(path string) (cookie uint64, back bool, err error) {
	own, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return 0, true, err
	}
	defer own.Close()
	f, err := os.Open(path)
	if err != nil {
		return 0, true, err
	}
	defer f.Close()
	if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
		return 0, true, fmt.Errorf("setns %s: %w", path, err)
	}
	defer func() { back = unix.Setns(int(own.Fd()), unix.CLONE_NEWNET) == nil }()
	cookie, err = socketCookie(path)
	return cookie, false, err
}

// socketCookie is the cookie of the calling thread's network namespace,
// which handle path named.
func socketCookie(path string) (uint64, error) {
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("a socket in %s: %w", path, err)
	}
	defer unix.Close(s)
	c, err := unix.GetsockoptUint64(s, unix.SOL_SOCKET, unix.SO_NETNS_COOKIE)
	if err != nil {
		return 0, fmt.Errorf("SO_NETNS_COOKIE in %s: %w", path, err)
	}
	return c, nil
}

// netnsHolders lists what still keeps namespace ns alive, seen from the
// whole machine (the test shares the host's PID namespace, so /proc shows
// every process): a process whose network namespace it is, or a mount of
// its handle in any process's mount namespace. A handle with ns's inode is
// counted only when its cookie is ns's too (or cannot be read while the
// handle is still there). An empty list means the kernel has freed the
// namespace, with every veth and bridge in it.
func netnsHolders(ns nsRef) []string {
	var held []string
	same := func(handle string) (bool, string) {
		c, err := netnsCookie(handle)
		if err != nil {
			if _, serr := os.Stat(handle); os.IsNotExist(serr) {
				return false, "" // gone between the listing and the look
			}
			return true, fmt.Sprintf(" (its cookie unreadable: %v)", err)
		}
		return c == ns.cookie, ""
	}
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		if l, err := os.Readlink(p + "/ns/net"); err == nil && l == ns.id {
			if ok, why := same(p + "/ns/net"); ok {
				held = append(held, p+" runs in it"+why)
			}
		}
		b, err := os.ReadFile(p + "/mountinfo")
		if err != nil || !strings.Contains(string(b), ns.id) {
			continue
		}
		for _, mp := range nsfsMounts(string(b), ns.id) {
			if ok, why := same(p + "/root" + mp); ok {
				held = append(held, p+" has its handle mounted on "+mp+why)
			}
		}
	}
	return held
}

// nsfsMounts returns the mount points of the mounts of namespace handle id
// in a mountinfo listing (its 4th field, the mount's root, is id; the 5th
// is the mount point, with space, tab, newline and backslash escaped as
// octal).
func nsfsMounts(mountinfo, id string) []string {
	var mps []string
	for _, line := range strings.Split(mountinfo, "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && f[3] == id {
			mps = append(mps, unescapeMount(f[4]))
		}
	}
	return mps
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// waitGone waits up to 30 s for namespace ns to have no holder (a killed
// process's namespaces go once the kernel has reaped it).
func waitGone(t *testing.T, what string, ns nsRef) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		held := netnsHolders(ns)
		if len(held) == 0 {
			return
		}
		if time.Now().After(end) {
			t.Errorf("%s (%s) is still alive 30 s on: %s", what, ns, strings.Join(held, "; "))
			return
		}
	}
}

func TestNetnsHoldersSeesALiveNamespace(t *testing.T) {
	ns, err := netnsRef("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	if held := netnsHolders(ns); len(held) == 0 {
		t.Fatalf("netnsHolders(%s) found nothing, but this test runs in it", ns)
	}
}

// A namespace that got a freed namespace's inode is not the freed one: the
// killed run's check failed in CI on a stranger's namespace (other
// processes ran in, and had mounted, a namespace with its inode 30 s
// after the kill). Here the stranger is this test's own namespace under
// another cookie.
func TestNetnsHoldersIgnoresAReusedInode(t *testing.T) {
	ns, err := netnsRef("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	stranger := nsRef{id: ns.id, cookie: ns.cookie + 1<<40}
	if held := netnsHolders(stranger); len(held) != 0 {
		t.Fatalf("netnsHolders(%s) counts a namespace with only its inode in common: %s", stranger, strings.Join(held, "; "))
	}
}

func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{
		`/run/netns/a`:            "/run/netns/a",
		`/run/net\040ns/a`:        "/run/net ns/a",
		`/a\134b`:                 `/a\b`,
		`/trailing\04`:            `/trailing\04`,
		`/not\089`:                `/not\089`,
		`/two\011\012`:            "/two\t\n",
		`/tmp/leasehold-faults-1`: "/tmp/leasehold-faults-1",
	} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}
