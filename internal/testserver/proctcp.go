package testserver

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// established returns the remote addresses of the process pid's
// established TCP connections, from /proc/PID/net/tcp and tcp6 (the
// sockets of its network namespace) and the sockets among its open files.
func established(pid int) (map[netip.AddrPort]struct{}, error) {
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	fds, err := os.ReadDir(filepath.Join(dir, "fd"))
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		l, err := os.Readlink(filepath.Join(dir, "fd", fd.Name()))
		if ino, ok := strings.CutPrefix(l, "socket:["); err == nil && ok {
			inodes[strings.TrimSuffix(ino, "]")] = true
		}
	}
	out := map[netip.AddrPort]struct{}{}
	for _, f := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(filepath.Join(dir, "net", f))
		if err != nil {
			return nil, err
		}
		peers, err := parseProcNetTCP(string(b), inodes)
		if err != nil {
			return nil, fmt.Errorf("testserver: /proc/%d/net/%s: %w", pid, f, err)
		}
		for _, p := range peers {
			out[p] = struct{}{}
		}
	}
	return out, nil
}

// tcpEstablished is TCP_ESTABLISHED in /proc/net/tcp's st column.
const tcpEstablished = "01"

// parseProcNetTCP returns the remote addresses (IPv4-mapped ones unmapped)
// of the established connections in a /proc/net/tcp or tcp6 table whose
// socket inode is in inodes.
func parseProcNetTCP(table string, inodes map[string]bool) ([]netip.AddrPort, error) {
	var out []netip.AddrPort
	lines := strings.Split(strings.TrimSpace(table), "\n")
	for _, line := range lines[1:] {
		f := strings.Fields(line)
		if len(f) < 10 {
			return nil, fmt.Errorf("a short line %q", line)
		}
		if f[3] != tcpEstablished || !inodes[f[9]] {
			continue
		}
		ap, err := parseProcAddr(f[2])
		if err != nil {
			return nil, err
		}
		out = append(out, ap)
	}
	return out, nil
}

// parseProcAddr reads an address of /proc/net/tcp: hex IP (32-bit words
// in the host's byte order, little-endian here), a colon, hex port.
func parseProcAddr(s string) (netip.AddrPort, error) {
	h, p, ok := strings.Cut(s, ":")
	port, err := strconv.ParseUint(p, 16, 16)
	raw, herr := hex.DecodeString(h)
	if !ok || err != nil || herr != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, fmt.Errorf("a bad address %q", s)
	}
	for w := 0; w < len(raw); w += 4 {
		binary.BigEndian.PutUint32(raw[w:], binary.LittleEndian.Uint32(raw[w:]))
	}
	a, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(a.Unmap(), uint16(port)), nil
}
