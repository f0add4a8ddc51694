package testserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// pgSession speaks just enough of the PostgreSQL protocol (version 3) for
// readiness probes and set-up statements: a startup as user on database
// db with trust authentication, then simple queries. It serves PgBouncer
// too.
func pgSession(ctx context.Context, addr, user, db string, queries ...string) error {
	d := net.Dialer{Timeout: 2 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	deadline := time.Now().Add(5 * time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.SetDeadline(deadline)
	var body bytes.Buffer
	_ = binary.Write(&body, binary.BigEndian, int32(196608)) // 3.0
	for _, s := range []string{"user", user, "database", db, ""} {
		body.WriteString(s)
		body.WriteByte(0)
	}
	if _, err := c.Write(pgMessage(0, body.Bytes())); err != nil {
		return err
	}
	r := bufio.NewReader(c)
	if err := pgUntilReady(r); err != nil {
		return err
	}
	for _, q := range queries {
		if _, err := c.Write(pgMessage('Q', append([]byte(q), 0))); err != nil {
			return err
		}
		if err := pgUntilReady(r); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	_, _ = c.Write(pgMessage('X', nil))
	return nil
}

// pgMessage frames a message; type 0 is the untyped startup message.
func pgMessage(typ byte, body []byte) []byte {
	var b []byte
	if typ != 0 {
		b = append(b, typ)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(body)+4))
	return append(b, body...)
}

// pgUntilReady reads messages up to ReadyForQuery, returning the first
// error the server sent.
func pgUntilReady(r *bufio.Reader) error {
	var first error
	for {
		var hdr [5]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return err
		}
		n := int(binary.BigEndian.Uint32(hdr[1:])) - 4
		if n < 0 || n > 1<<20 {
			return fmt.Errorf("testserver: bad PostgreSQL message length %d", n)
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return err
		}
		switch hdr[0] {
		case 'Z':
			return first
		case 'E':
			err := pgError(body)
			if first == nil {
				first = err
			}
			if len(body) > 0 && bytes.Contains(body, []byte("FATAL\x00")) {
				return err // the server closes the connection
			}
		case 'R':
			if len(body) < 4 || binary.BigEndian.Uint32(body) != 0 {
				return errors.New("testserver: the server asks for a password (only trust is supported)")
			}
		}
	}
}

// pgError formats an ErrorResponse: its severity, code and message.
func pgError(body []byte) error {
	var sev, code, msg string
	for _, f := range bytes.Split(body, []byte{0}) {
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case 'S':
			sev = string(f[1:])
		case 'C':
			code = string(f[1:])
		case 'M':
			msg = string(f[1:])
		}
	}
	return fmt.Errorf("%s: %s (SQLSTATE %s)", sev, msg, code)
}
