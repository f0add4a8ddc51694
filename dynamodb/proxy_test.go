package dynamodb_test

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/dynamodb"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

// proxy is dynalite behind a reverse proxy that refuses requests signed
// with another access key than the tests' (as DynamoDB does: dynalite
// checks no signature) and loses the answers of the next lose writes
// (PutItem, UpdateItem) after they were applied.
type proxy struct {
	*httptest.Server
	lose atomic.Int32 // answers still to lose
	lost atomic.Int32 // answers lost

	mu    sync.Mutex
	calls map[string]int // requests by operation (GetItem, PutItem, ...)
}

// count returns the requests made per operation since the last count.
func (p *proxy) count() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.calls
	p.calls = map[string]int{}
	return c
}

func newProxy(t *testing.T, endpoint string) *proxy {
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{}
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(target) }, ModifyResponse: p.modify}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Authorization"), "Credential="+testserver.DynaliteAccessKey+"/") {
			answer(w, http.StatusBadRequest, "com.amazon.coral.service#UnrecognizedClientException", "The security token included in the request is invalid.")
			return
		}
		p.mu.Lock()
		if p.calls == nil {
			p.calls = map[string]int{}
		}
		_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
		p.calls[op]++
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

// answer writes a DynamoDB error.
func answer(w http.ResponseWriter, status int, typ, msg string) {
	body := fmt.Sprintf(`{"__type":%q,"message":%q}`, typ, msg)
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amz-Crc32", fmt.Sprint(crc32.ChecksumIEEE([]byte(body))))
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// modify turns an applied write's answer into a 500, which the SDK
// retries, while p.lose lasts.
func (p *proxy) modify(resp *http.Response) error {
	op := resp.Request.Header.Get("X-Amz-Target")
	if resp.StatusCode != http.StatusOK || !(strings.HasSuffix(op, ".PutItem") || strings.HasSuffix(op, ".UpdateItem")) || p.lose.Add(-1) < 0 {
		return nil
	}
	p.lost.Add(1)
	resp.Body.Close()
	body := `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"answer lost by the test proxy"}`
	resp.StatusCode, resp.Status = http.StatusInternalServerError, "500 Internal Server Error"
	resp.Body, resp.ContentLength = io.NopCloser(strings.NewReader(body)), int64(len(body))
	resp.Header.Set("Content-Length", fmt.Sprint(len(body)))
	resp.Header.Set("X-Amz-Crc32", fmt.Sprint(crc32.ChecksumIEEE([]byte(body))))
	return nil
}

// testLostReplies loses the answer of one write at a time (the write
// lands, the client gets 500 and the SDK retries it, which its condition
// refuses or applies again): acquire, renew and release still succeed, and
// the item is what they wrote.
func testLostReplies(t *testing.T, ep string) {
	p := newProxy(t, ep)
	s, err := dynamodb.OpenURL(ctxT(t), storeURL(p.URL, "badinput"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p.lose.Store(1)
	g := acquire(t, s, "lost")
	if h, err := s.Holder(ctxT(t), "lost"); err != nil || h.Token != g.Token || p.lost.Load() != 1 {
		t.Fatalf("after an acquire whose answer was lost: Holder %+v, %v (answers lost: %d); want token %d", h, err, p.lost.Load(), g.Token)
	}
	p.lose.Store(1)
	if _, err := s.Renew(ctxT(t), g); err != nil || p.lost.Load() != 2 {
		t.Fatalf("renew whose answer was lost: %v (answers lost: %d)", err, p.lost.Load())
	}
	p.lose.Store(1)
	if err := s.Release(ctxT(t), g); err != nil || p.lost.Load() != 3 {
		t.Fatalf("release whose answer was lost: %v (answers lost: %d)", err, p.lost.Load())
	}
	if _, err := s.Holder(ctxT(t), "lost"); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("after release: %v, want ErrNotHeld", err)
	}
	if err := s.Release(ctxT(t), g); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("a second release: %v, want ErrNotHeld", err)
	}
}

// testRequests counts the requests of each call (the README's table): an
// acquire reads and writes, but the acquire after this store's own release
// of the key writes on the version its release wrote, unread; renew and
// release write once. Another store's release in between makes that write
// fail its condition, and the acquire reads after all.
func testRequests(t *testing.T, ep string) {
	p := newProxy(t, ep)
	s := open(t, p.URL, "badinput")
	other := open(t, ep, "badinput")
	p.count()
	want := func(what string, calls map[string]int) {
		t.Helper()
		if got := p.count(); !maps.Equal(got, calls) {
			t.Errorf("%s: requests %v, want %v", what, got, calls)
		}
	}
	g := acquire(t, s, "counted")
	want("first acquire", map[string]int{"GetItem": 1, "PutItem": 1})
	if _, err := s.Renew(ctxT(t), g); err != nil {
		t.Fatal(err)
	}
	want("renew", map[string]int{"UpdateItem": 1})
	release(t, s, g)
	want("release", map[string]int{"UpdateItem": 1})
	g2 := acquire(t, s, "counted")
	want("acquire after its own release", map[string]int{"PutItem": 1})
	if g2.Token <= g.Token {
		t.Fatalf("token %d after %d", g2.Token, g.Token)
	}
	release(t, s, g2)
	p.count()
	release(t, other, acquire(t, other, "counted"))
	g3 := acquire(t, s, "counted")
	want("acquire after another store's grant", map[string]int{"PutItem": 2, "GetItem": 1})
	if h, err := other.Holder(ctxT(t), "counted"); err != nil || h.Token != g3.Token || g3.Token <= g2.Token {
		t.Fatalf("Holder %+v, %v; want token %d, above %d", h, err, g3.Token, g2.Token)
	}
}
