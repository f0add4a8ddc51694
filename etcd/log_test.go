package etcd

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"go.uber.org/zap"
)

// TestZapLogger: the etcd client's zap lines reach the slog handler with
// their level, message, logger name and fields, and lines below the
// handler's level are dropped before they are built.
func TestZapLogger(t *testing.T) {
	var buf bytes.Buffer
	l := ZapLogger(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	l.Debug("dropped", zap.String("a", "b"))
	l.Named("client").With(zap.Int("member", 3)).Warn("retrying of unary invoker failed", zap.String("target", "etcd-endpoints://x"))
	l.Error("boom", zap.Error(errTest{}))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2:\n%s", len(lines), buf.String())
	}
	var warn, errLine map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &warn); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &errLine); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"level": "WARN", "msg": "retrying of unary invoker failed", "driver": "etcd",
		"logger": "client", "member": float64(3), "target": "etcd-endpoints://x"}
	for k, v := range want {
		if warn[k] != v {
			t.Errorf("warn line %s = %v, want %v (%s)", k, warn[k], v, lines[0])
		}
	}
	if errLine["level"] != "ERROR" || errLine["error"] != "test error" {
		t.Errorf("error line %s", lines[1])
	}
}

type errTest struct{}

func (errTest) Error() string { return "test error" }
