package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeLimits: leasehold serve answers a header over its limit with
// 431, closes a kept-alive connection idle past --idle-timeout, refuses a
// watch past --max-watches with 503 naming the flag, and refuses caps
// that are not positive.
func TestServeLimits(t *testing.T) {
	e := newEnv(t)
	for _, args := range [][]string{{"--max-watches", "0"}, {"--max-waits", "-1"}, {"--idle-timeout", "0s"}} {
		all := append([]string{"serve", "--listen", "127.0.0.1:0", "--insecure-loopback"}, args...)
		if code, _, stderr := e.lh(nil, all...); code != exitUsage || !strings.Contains(stderr, args[0]) {
			t.Errorf("serve %v exited %d: %q, want %d naming %s", args, code, stderr, exitUsage, args[0])
		}
	}
	_, ann := startServe(t, e, "--store", e.store, "--listen", "127.0.0.1:0", "--insecure-loopback",
		"--idle-timeout", "200ms", "--max-watches", "1")
	addr := strings.TrimPrefix(ann.URL, "http://")

	c, r := dial(t, addr)
	fmt.Fprintf(c, "GET /v1/info HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n", strings.Repeat("b", 100<<10))
	if resp, err := http.ReadResponse(r, nil); err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a 100 KiB header: %v %v, want 431", resp, err)
	}

	c, r = dial(t, addr)
	fmt.Fprintf(c, "GET /v1/info HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(r, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("info: %v %v", resp, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second)) // only if the server never closes it
	if _, err := r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("the idle kept-alive connection: %v, want it closed by the server (EOF)", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ann.URL+"/v1/watch?prefix=jobs/", nil)
	watch, err := http.DefaultClient.Do(req)
	if err != nil || watch.StatusCode != http.StatusOK {
		t.Fatalf("the first watch: %v %v", watch, err)
	}
	defer watch.Body.Close()
	more, err := http.Get(ann.URL + "/v1/watch?key=jobs/a")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(more.Body)
	more.Body.Close()
	if more.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "--max-watches") {
		t.Errorf("a second watch with --max-watches 1: %d %s, want 503 naming --max-watches", more.StatusCode, body)
	}
}

// dial connects to addr; the connection is closed when the test ends.
func dial(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}
