package remote_test

import (
	"testing"

	"github.com/leasehold-go/leasehold/internal/servetest"
	"github.com/leasehold-go/leasehold/leasetest"
	"github.com/leasehold-go/leasehold/memory"
)

// TestConformanceMemory runs the conformance suite through the server in
// front of a memory store, whose grants the server keeps under handles;
// Restart restarts the server.
func TestConformanceMemory(t *testing.T) {
	srv := servetest.Start(t, memory.New(nil))
	leasetest.Run(t, leasetest.Config{Open: srv.Open, Restart: srv.Restart, IgnoreGoroutines: servetest.IgnoreGoroutines()})
}
