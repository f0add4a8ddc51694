package zookeeper

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"time"
)

// The session bounds. A ZooKeeper server clamps the session timeout a
// client asks for into [minSessionTimeout, maxSessionTimeout] (by default 2
// and 20 ticks) and answers with the timeout it grants; nothing else tells
// a client those bounds. So New asks twice, with the smallest and the
// largest timeouts, on a bare connection that closes its session at once.

// Bounds are the session timeouts a ZooKeeper ensemble negotiates.
type Bounds struct {
	MinSession, MaxSession time.Duration
}

// probeBounds asks the first server of servers that answers for its
// session bounds.
func probeBounds(ctx context.Context, servers []string) (Bounds, error) {
	var errs []error
	for _, addr := range servers {
		lo, err := negotiate(ctx, addr, 1)
		if err == nil {
			var hi time.Duration
			if hi, err = negotiate(ctx, addr, math.MaxInt32); err == nil {
				return Bounds{MinSession: lo, MaxSession: hi}, nil
			}
		}
		if ctx.Err() != nil {
			return Bounds{}, fmt.Errorf("%v: %w", err, ctx.Err())
		}
		errs = append(errs, err)
	}
	return Bounds{}, errors.Join(errs...)
}

// negotiate opens a session on addr asking for a timeout of ms
// milliseconds, closes it, and returns the timeout the server granted.
func negotiate(ctx context.Context, addr string, ms int32) (time.Duration, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	// ConnectRequest: protocolVersion, lastZxidSeen, timeOut, sessionId,
	// passwd (16 zero bytes), each length-prefixed as jute writes it.
	req := make([]byte, 4+4+8+4+8+4+16)
	binary.BigEndian.PutUint32(req[0:], uint32(len(req)-4))
	binary.BigEndian.PutUint32(req[16:], uint32(ms))
	binary.BigEndian.PutUint32(req[28:], 16)
	if _, err := c.Write(req); err != nil {
		return 0, err
	}
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return 0, fmt.Errorf("connected to %s, which did not answer the session request (not a ZooKeeper server, or it does not serve: no quorum, or a leader that commits nothing): %w", addr, err)
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n < 16 || n > 1<<16 {
		return 0, fmt.Errorf("%s: bad connect answer of %d bytes (not a ZooKeeper server?)", addr, n)
	}
	resp := make([]byte, n)
	if _, err := io.ReadFull(c, resp); err != nil {
		return 0, err
	}
	timeout := int32(binary.BigEndian.Uint32(resp[4:]))
	session := binary.BigEndian.Uint64(resp[8:])
	if session == 0 || timeout <= 0 {
		return 0, fmt.Errorf("%s: the server refused a session (it may not serve: no quorum?)", addr)
	}
	// closeSession: xid 1, opcode -11.
	var cl [12]byte
	binary.BigEndian.PutUint32(cl[0:], 8)
	binary.BigEndian.PutUint32(cl[4:], 1)
	binary.BigEndian.PutUint32(cl[8:], uint32(0xfffffff5))
	_, _ = c.Write(cl[:])
	_, _ = io.ReadFull(c, hdr[:]) // the close's answer, best effort
	return time.Duration(timeout) * time.Millisecond, nil
}
