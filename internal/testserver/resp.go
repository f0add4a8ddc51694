package testserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// redisPing sends PING and expects +PONG, or NOAUTH from a server with a
// password, which is up all the same.
func redisPing(ctx context.Context, addr string) error {
	r, err := redisDo(ctx, addr, "PING")
	if err != nil {
		return err
	}
	if e, ok := r.(error); ok && strings.HasPrefix(e.Error(), "NOAUTH") {
		return nil
	}
	if r != RedisStatus("PONG") {
		return fmt.Errorf("PING answered %s", formatReply(r))
	}
	return nil
}

// RedisStatus is a simple-string reply ("+OK").
type RedisStatus string

// Do sends one command and returns its reply: string (bulk), RedisStatus
// (simple string), int64, nil, []any, or a Redis error reply as an error
// value (not as Do's error, which is for failures to talk).
func (r *Redis) Do(ctx context.Context, args ...string) (any, error) {
	return redisDo(ctx, r.Addr(), args...)
}

// Command sends one command and returns its reply as text: a bulk string
// as is, a simple string as "+OK", an integer as ":n", an error as
// "-ERR ...", nil as "(nil)", an array as its elements in brackets.
func (r *Redis) Command(ctx context.Context, args ...string) (string, error) {
	v, err := r.Do(ctx, args...)
	if err != nil {
		return "", err
	}
	return formatReply(v), nil
}

func redisDo(ctx context.Context, addr string, args ...string) (any, error) {
	d := net.Dialer{Timeout: time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	deadline := time.Now().Add(5 * time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.SetDeadline(deadline)
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(c, b.String()); err != nil {
		return nil, err
	}
	return readReply(bufio.NewReader(c))
}

func formatReply(r any) string {
	switch v := r.(type) {
	case nil:
		return "(nil)"
	case int64:
		return ":" + strconv.FormatInt(v, 10)
	case RedisStatus:
		return "+" + string(v)
	case error:
		return "-" + v.Error()
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = formatReply(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprint(r)
}

func readReply(r *bufio.Reader) (any, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return nil, errors.New("testserver: empty reply line")
	}
	body := line[1:]
	switch line[0] {
	case '+':
		return RedisStatus(body), nil
	case '-':
		return errors.New(body), nil
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = readReply(r); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("testserver: unknown reply %q", line)
}
