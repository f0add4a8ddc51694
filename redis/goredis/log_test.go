package goredis

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// TestSlogLogger: go-redis's Printf lines reach slog at Warn, formatted,
// with driver=go-redis; a handler above Warn drops them.
func TestSlogLogger(t *testing.T) {
	var buf bytes.Buffer
	SlogLogger(slog.New(slog.NewTextHandler(&buf, nil))).Printf(context.Background(), "redis: %s failed: %d", "dial", 3)
	got := buf.String()
	for _, want := range []string{"level=WARN", `msg="redis: dial failed: 3"`, "driver=go-redis"} {
		if !strings.Contains(got, want) {
			t.Errorf("line %q lacks %q", got, want)
		}
	}
	buf.Reset()
	SlogLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelError}))).Printf(context.Background(), "x")
	if buf.Len() != 0 {
		t.Errorf("a handler at Error logged %q", buf.String())
	}
}
