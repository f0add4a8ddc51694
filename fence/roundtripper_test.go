package fence

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

// recordingTransport records the requests it is given.
type recordingTransport struct{ reqs []*http.Request }

func (rt *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rt.reqs = append(rt.reqs, req)
	return &http.Response{StatusCode: 200, Body: http.NoBody, Request: req}, nil
}

func TestRoundTripperStamps(t *testing.T) {
	tests := []struct {
		name     string
		ctxToken *uint64
		preset   []string // header values the caller set
		want     []string // header values sent
		sameReq  bool     // the caller's request is passed on as is
	}{
		{"no token", nil, nil, nil, true},
		{"no token, caller's header kept", nil, []string{"3"}, []string{"3"}, true},
		{"token", ptr(42), nil, []string{"42"}, false},
		{"token replaces header", ptr(42), []string{"3", "4"}, []string{"42"}, false},
		{"zero token", ptr(0), nil, []string{"0"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := &recordingTransport{}
			rt := &RoundTripper{Base: base}
			ctx := context.Background()
			if tt.ctxToken != nil {
				ctx = WithToken(ctx, *tt.ctxToken)
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodPut, "http://example.invalid/x", nil)
			for _, v := range tt.preset {
				req.Header.Add(Header, v)
			}
			before := req.Header.Clone()
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			sent := base.reqs[0]
			if got := sent.Header.Values(Header); !slices.Equal(got, tt.want) {
				t.Errorf("sent %s = %q; want %q", Header, got, tt.want)
			}
			if (sent == req) != tt.sameReq {
				t.Errorf("sent the caller's request: %v; want %v", sent == req, tt.sameReq)
			}
			if got := req.Header.Values(Header); !slices.Equal(got, before.Values(Header)) {
				t.Errorf("the caller's request was modified: %q, was %q", got, before.Values(Header))
			}
			if sent.Context() != req.Context() {
				t.Error("the clone lost the request's context")
			}
		})
	}
}

func TestRoundTripperNilHeader(t *testing.T) {
	base := &recordingTransport{}
	req := (&http.Request{Method: http.MethodGet}).WithContext(WithToken(context.Background(), 9))
	req.Header = nil
	if _, err := (&RoundTripper{Base: base}).RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if got := base.reqs[0].Header.Get(Header); got != "9" {
		t.Fatalf("sent %q", got)
	}
	if req.Header != nil {
		t.Fatal("the caller's request was modified")
	}
}

// TestRoundTripperEndToEnd sends through the default transport to a server
// guarded by Middleware.
func TestRoundTripperEndToEnd(t *testing.T) {
	var g MemoryGuard
	srv := httptest.NewServer(Middleware(&g, echoHandler))
	defer srv.Close()
	defer srv.Client().CloseIdleConnections()
	client := &http.Client{Transport: &RoundTripper{Base: srv.Client().Transport}}

	do := func(ctx context.Context) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPut, srv.URL+"/doc", nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	ctx := context.Background()
	if code, _ := do(ctx); code != 400 {
		t.Fatalf("no token: %d", code)
	}
	if code, body := do(WithToken(ctx, 8)); code != 200 || body != "token=8 ok=true" {
		t.Fatalf("token 8: %d %q", code, body)
	}
	if code, _ := do(WithToken(ctx, 7)); code != 409 {
		t.Fatalf("token 7 after 8: %d", code)
	}
}

func TestRoundTripperDefaultBase(t *testing.T) {
	var g MemoryGuard
	srv := httptest.NewServer(Middleware(&g, echoHandler))
	defer srv.Close()
	defer http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	req, _ := http.NewRequestWithContext(WithToken(context.Background(), 1), http.MethodGet, srv.URL, nil)
	resp, err := (&http.Client{Transport: &RoundTripper{}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

func ptr(v uint64) *uint64 { return &v }
