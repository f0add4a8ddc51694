package remote_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
	"github.com/leasehold-go/leasehold/remote"
	"github.com/leasehold-go/leasehold/serve"
)

// barrier lets n callers through at a time, once all n have come.
type barrier struct {
	mu    sync.Mutex
	n     int
	count int
	gen   chan struct{}
}

func (b *barrier) wait() {
	b.mu.Lock()
	ch := b.gen
	b.count++
	if b.count == b.n {
		b.count = 0
		close(b.gen)
		b.gen = make(chan struct{})
	}
	b.mu.Unlock()
	<-ch
}

// TestConnectionsReused checks that the store's own client keeps its
// connections to the server for the next requests when many goroutines
// use it at once: rounds of 64 holder reads held together on the server
// (so that 64 connections are in use at once), each round begun once the
// last one's have all returned (so that no request waits to take a
// connection over), must not dial 64 new connections each round.
// http.DefaultTransport keeps 2 idle connections per host: with it, each
// round after the first dialled 62.
func TestConnectionsReused(t *testing.T) {
	const goroutines, rounds = 64, 20
	bar := &barrier{n: goroutines, gen: make(chan struct{})}  // on the server: 64 in use at once
	done := &barrier{n: goroutines, gen: make(chan struct{})} // in the client: all idle, none waiting
	srv := serve.New(memory.New(nil), nil)
	defer srv.Close()
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/holder") {
			bar.wait()
		}
		srv.ServeHTTP(w, r)
	}))
	var dialled atomic.Int64
	hs.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dialled.Add(1)
		}
	}
	hs.Start()
	defer hs.Close()
	st, err := remote.Open(context.Background(), hs.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				// nobody holds k: the answer is ErrNotHeld
				if _, err := st.Holder(context.Background(), "k"); !errors.Is(err, leasehold.ErrNotHeld) {
					errs <- err
					return
				}
				done.wait()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// 64 connections for the first round (and the one of Open), a few
	// more where a round's request raced the return of the last round's
	// connection; 62 more per round without the fix.
	if n := dialled.Load(); n > 2*goroutines {
		t.Errorf("%d rounds of %d concurrent requests dialled %d connections; want at most %d (they are kept for the next round)", rounds, goroutines, n, 2*goroutines)
	}
}
