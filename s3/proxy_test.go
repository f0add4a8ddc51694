package s3_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/s3"
)

// ignoring is versitygw behind a proxy that drops one request header and
// signs the request again: a server that ignores that condition.
func ignoring(t *testing.T, v *testserver.Versity, header string) string {
	return proxy(t, v, header, nil)
}

// proxy is versitygw behind a proxy that drops header from requests, signs
// them again, and passes each response through modify (if not nil).
func proxy(t *testing.T, v *testserver.Versity, header string, modify func(*http.Response) error) string {
	target, err := url.Parse(v.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	signer := v4.NewSigner()
	creds := aws.Credentials{AccessKeyID: testserver.VersityAccessKey, SecretAccessKey: testserver.VersitySecretKey}
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(target)
		pr.Out.Header.Del(header)
		pr.Out.Header.Del("Authorization")
		hash := pr.Out.Header.Get("X-Amz-Content-Sha256")
		if err := signer.SignHTTP(pr.Out.Context(), creds, pr.Out, hash, "s3", testserver.VersityRegion, time.Now()); err != nil {
			t.Error(err)
		}
	}, ModifyResponse: modify}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv.URL
}

// testUnsafe opens the store through servers that ignore If-None-Match or
// If-Match: the probe refuses both, naming the condition. The same proxy
// passing every header is accepted (the negative control).
func testUnsafe(t *testing.T, v *testserver.Versity) {
	for header, want := range map[string]string{"If-None-Match": "If-None-Match: * replaced", "If-Match": "If-Match on a wrong ETag was applied"} {
		u := strings.Replace(storeURL(v, "badinput"), v.Endpoint(), ignoring(t, v, header), 1)
		s, err := s3.OpenURL(ctxT(t), u)
		if err == nil {
			s.Close()
			t.Fatalf("a server ignoring %s was accepted", header)
		}
		if !errors.Is(err, s3.ErrUnsafeServer) {
			t.Errorf("a server ignoring %s: %v, want ErrUnsafeServer", header, err)
		}
		wantErr(t, "a server ignoring "+header, err, "s3", "open", "bucket badinput", want)
	}
	u := strings.Replace(storeURL(v, "badinput"), v.Endpoint(), ignoring(t, v, "X-Nothing"), 1)
	s, err := s3.OpenURL(ctxT(t), u)
	if err != nil {
		t.Fatalf("the proxy dropping nothing: %v", err)
	}
	release(t, s, acquire(t, s, "through-proxy"))
	s.Close()
	b, prefix := s.Bucket(), "lh/probe/"
	out, err := s.Client().ListObjectsV2(ctxT(t), &awss3.ListObjectsV2Input{Bucket: &b, Prefix: &prefix})
	if err != nil || len(out.Contents) != 0 {
		t.Errorf("probe objects left behind: %v, %v", out, err)
	}
}

// testLostReplies loses the answer of one lease write at a time (the write
// lands, the client gets 503 and the SDK retries it, which its own
// precondition refuses): acquire, renew and release still succeed, and
// the store's state is what they wrote.
func testLostReplies(t *testing.T, v *testserver.Versity) {
	var drop atomic.Int32
	lose := func(resp *http.Response) error {
		r := resp.Request
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/keys/") && resp.StatusCode == http.StatusOK && drop.Add(-1) >= 0 {
			resp.Body.Close()
			resp.StatusCode, resp.Status = http.StatusServiceUnavailable, "503 Service Unavailable"
			body := "<Error><Code>SlowDown</Code><Message>answer lost by the test proxy</Message></Error>"
			resp.Body, resp.ContentLength = io.NopCloser(strings.NewReader(body)), int64(len(body))
			resp.Header.Set("Content-Length", fmt.Sprint(len(body)))
			resp.Header.Del("ETag")
		}
		return nil
	}
	u := strings.Replace(storeURL(v, "deleted"), v.Endpoint(), proxy(t, v, "X-Nothing", lose), 1)
	s, err := s3.OpenURL(ctxT(t), u)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	drop.Store(1)
	g := acquire(t, s, "lost")
	if h, err := s.Holder(ctxT(t), "lost"); err != nil || h.Token != g.Token || drop.Load() > 0 {
		t.Fatalf("after an acquire whose answer was lost: Holder %+v, %v (answers left to lose: %d); want token %d", h, err, drop.Load(), g.Token)
	}
	drop.Store(1)
	if _, err := s.Renew(ctxT(t), g); err != nil || drop.Load() > 0 {
		t.Fatalf("renew whose answer was lost: %v (answers left to lose: %d)", err, drop.Load())
	}
	drop.Store(1)
	if err := s.Release(ctxT(t), g); err != nil || drop.Load() > 0 {
		t.Fatalf("release whose answer was lost: %v (answers left to lose: %d)", err, drop.Load())
	}
	if _, err := s.Holder(ctxT(t), "lost"); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("after release: %v, want ErrNotHeld", err)
	}
}
