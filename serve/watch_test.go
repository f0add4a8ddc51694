package serve

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold/internal/wire"
)

// TestWatchStream: the stream says ready once subscribed, then change when
// the key is released through the server, and never shows the owner id.
func TestWatchStream(t *testing.T) {
	s, _ := newServer(t)
	hs := httptest.NewServer(s)
	defer hs.Close()
	g := acquire(t, s, "jobs/w", owner)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", hs.URL+"/v1/watch?key=jobs/w", nil)
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("watch: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	lines := bufio.NewScanner(resp.Body)
	next := func() string {
		var ev []string
		for lines.Scan() && lines.Text() != "" {
			ev = append(ev, lines.Text())
		}
		return strings.Join(ev, "|")
	}
	if ev := next(); ev != `event: ready|data: {"key":"jobs/w"}` {
		t.Fatalf("first event %q, want ready", ev)
	}
	rel := wire.GrantRequest{Key: g.Key, Owner: g.Owner, Token: g.Token, Handle: g.Handle}
	if w := do(t, s, "POST", "/v1/release", jsonOf(t, rel)); w.Code != http.StatusNoContent {
		t.Fatalf("release: %d %s", w.Code, w.Body)
	}
	if ev := next(); ev != `event: change|data: {"key":"jobs/w"}` {
		t.Fatalf("event after the release %q, want change", ev)
	}
}

// TestWatchEndsOnClose: closing the server ends its watch streams.
func TestWatchEndsOnClose(t *testing.T) {
	st := newMemory()
	s := New(st, nil)
	hs := httptest.NewServer(s)
	defer hs.Close()
	resp, err := hs.Client().Get(hs.URL + "/v1/watch?key=k")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	lines.Scan() // event: ready
	_ = s.Close()
	for lines.Scan() {
	}
	if lines.Err() != nil {
		t.Errorf("the stream ended with %v, want its end", lines.Err())
	}
}
