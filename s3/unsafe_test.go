package s3_test

import (
	"errors"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/s3"
)

// ignoring is versitygw behind a proxy that drops one request header and
// signs the request again: a server that ignores that condition.
func ignoring(t *testing.T, v *testserver.Versity, header string) string {
	target, err := url.Parse(v.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	signer := v4.NewSigner()
	creds := aws.Credentials{AccessKeyID: testserver.VersityAccessKey, SecretAccessKey: testserver.VersitySecretKey}
	proxy := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(target)
		pr.Out.Header.Del(header)
		pr.Out.Header.Del("Authorization")
		hash := pr.Out.Header.Get("X-Amz-Content-Sha256")
		if err := signer.SignHTTP(pr.Out.Context(), creds, pr.Out, hash, "s3", testserver.VersityRegion, time.Now()); err != nil {
			t.Error(err)
		}
	}}
	srv := httptest.NewServer(proxy)
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
