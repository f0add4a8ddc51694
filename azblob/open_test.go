package azblob

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// TestTransportKeepsConnections: 16 requests in flight at once, twice, on
// the store's transport, dial 16 connections, not 16 + 14: the transport
// keeps them for the next requests (Go's default keeps 2 per host).
func TestTransportKeepsConnections(t *testing.T) {
	const n = 16
	var dials atomic.Int64
	var arrived sync.WaitGroup
	release := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Done()
		<-release
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dials.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	_, tr := options()
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr}
	for range 2 {
		arrived.Add(n)
		release = make(chan struct{})
		var done sync.WaitGroup
		for range n {
			done.Add(1)
			go func() {
				defer done.Done()
				resp, err := cl.Get(srv.URL)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
			}()
		}
		arrived.Wait() // all n in flight at once
		close(release)
		done.Wait()
	}
	if got := dials.Load(); got != n {
		t.Fatalf("%d connections dialled for 2 rounds of %d requests in flight; want %d (kept for the second round)", got, n, n)
	}
}
