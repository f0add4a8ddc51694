package testserver

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
)

// Mode returns node i's "Mode:" from srvr: "standalone", "leader" or
// "follower"; an error when it does not serve.
func (z *ZooKeeper) Mode(ctx context.Context, i int) (string, error) {
	out, err := fourLetterWord(ctx, z.Nodes[i].Addr(), "srvr")
	if err != nil {
		return "", err
	}
	m, ok := srvrMode(out)
	if !ok {
		return "", fmt.Errorf("%w: srvr said %q", errNotServing, strings.TrimSpace(out))
	}
	return m, nil
}

// srvrMode returns the Mode srvr's answer names, and false when it names
// none (the server does not serve).
func srvrMode(out string) (string, bool) {
	for line := range strings.SplitSeq(out, "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(line), "Mode: "); ok && m != "" {
			return m, true
		}
	}
	return "", false
}

// Leader returns the index of the ensemble's leader (of a standalone
// server, 0), or an error when none serves as leader.
func (z *ZooKeeper) Leader(ctx context.Context) (int, error) {
	for i, n := range z.Nodes {
		if !n.Running() {
			continue
		}
		if m, err := z.Mode(ctx, i); err == nil && (m == "leader" || m == "standalone") {
			return i, nil
		}
	}
	return -1, fmt.Errorf("%w: no server is the leader", errNotServing)
}

// LeaderSeen returns the index of the server that server i follows (i
// itself when it leads), or -1 when it has none (it answers srvr but does
// not serve: it lost its leader and looks for one); an error when i does
// not answer. srvr does not name a follower's leader; the follower's open
// connection does: a follower keeps one TCP connection to its leader's
// quorum port, which it closes when it gives up on it, and only a leader
// listens there. LeaderSeen reads it from the server's sockets in
// /proc/PID/net/tcp and tcp6 (its network namespace's).
func (z *ZooKeeper) LeaderSeen(ctx context.Context, i int) (int, error) {
	out, err := fourLetterWord(ctx, z.Nodes[i].Addr(), "srvr")
	if err != nil {
		return -1, err
	}
	m, ok := srvrMode(out)
	switch {
	case !ok:
		return -1, nil
	case m == "leader" || m == "standalone":
		return i, nil
	}
	peers, err := established(z.Nodes[i].Pid())
	if err != nil {
		return -1, err
	}
	for j, n := range z.Nodes {
		if j == i || n.QuorumPort == 0 {
			continue
		}
		host, err := netip.ParseAddr(n.Host)
		if err != nil {
			return -1, err
		}
		if _, ok := peers[netip.AddrPortFrom(host, uint16(n.QuorumPort))]; ok {
			return j, nil
		}
	}
	return -1, fmt.Errorf("testserver: ZooKeeper server %d is a %s with no connection to a server's quorum port", z.Nodes[i].ID, m)
}
