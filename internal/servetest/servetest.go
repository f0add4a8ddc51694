// Package servetest runs a leasehold server (package serve) over a store on
// a loopback port for tests, and restarts it on the same port as a new
// process would come back: with no memory of the grants it kept.
package servetest

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/remote"
	"github.com/leasehold-go/leasehold/serve"
)

// IgnoreGoroutines names the functions of a restarted server's own
// goroutines (its listener's accept loop, its sweeper), which a
// restart started after the conformance suite took its goroutine
// baseline: pass them as leasetest.Config.IgnoreGoroutines.
func IgnoreGoroutines() []string {
	return []string{"net/http.(*Server).Serve", "github.com/leasehold-go/leasehold/serve.(*Server).sweepLoop"}
}

// Server is a leasehold server on a loopback port.
type Server struct {
	URL   string
	store leasehold.Store
	addr  string
	srv   *serve.Server
	hs    *httptest.Server
}

// Start serves store on a new loopback port until t ends. It does not
// close store.
func Start(t testing.TB, store leasehold.Store) *Server {
	t.Helper()
	s := &Server{store: store}
	s.start(t, "127.0.0.1:0")
	t.Cleanup(s.stop)
	return s
}

func (s *Server) start(t testing.TB, addr string) {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("servetest: listen on %s: %v", addr, err)
	}
	s.srv = serve.New(s.store, nil)
	s.hs = httptest.NewUnstartedServer(s.srv)
	s.hs.Listener.Close()
	s.hs.Listener = l
	s.hs.Start()
	s.addr = l.Addr().String()
	s.URL = "http://" + s.addr
}

func (s *Server) stop() {
	s.hs.CloseClientConnections()
	s.hs.Close()
	_ = s.srv.Close()
}

// Stop stops the server as Close would (it releases the grants it keeps);
// it stays stopped.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	s.stop()
}

// Restart stops the server, dropping its connections and the grants it
// keeps without releasing them (as a killed process would), and starts a
// new one on the same address.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.hs.CloseClientConnections()
	s.hs.Close()
	s.srv.Abandon()
	s.start(t, s.addr)
}

// Kill stops the server as a killed process stops: its connections
// dropped, the grants it keeps forgotten (not released), its port closed.
// It is not started again; the cleanup at the end of the test does nothing
// more.
func (s *Server) Kill() {
	s.hs.CloseClientConnections()
	s.hs.Close()
	s.srv.Abandon()
}

// Open opens a remote store on the server, closed when t ends.
func (s *Server) Open(t testing.TB) leasehold.Store {
	t.Helper()
	st, err := remote.Open(context.Background(), s.URL, nil)
	if err != nil {
		t.Fatalf("remote.Open(%s): %v", s.URL, err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// Handler returns the running server's handler.
func (s *Server) Handler() http.Handler { return s.srv }
