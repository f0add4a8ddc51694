package s3

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/leasehold-go/leasehold"
)

// DefaultRegion is the region of a URL that names none, when the
// environment and the shared configuration name none either.
const DefaultRegion = "us-east-1"

// OpenURL opens a store from
//
//	s3://BUCKET[/PREFIX]?endpoint=URL&region=R&path_style=true|false&access_key=K&secret_key=S&session_token=T
//
// Every parameter is optional. endpoint is the server's URL (say
// http://127.0.0.1:7070 for versitygw or MinIO); without it the SDK's AWS
// endpoint for the region is used. region defaults to the environment's
// (AWS_REGION) or the shared configuration's, else us-east-1. path_style
// (path-style addressing, http://host/BUCKET/...) defaults to true with an
// endpoint and false without. Credentials come from access_key and
// secret_key (with session_token) when given, else from the SDK's default
// chain: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN,
// then the shared files (AWS_PROFILE), web identity, and the container or
// instance role. PREFIX is put before the store's object names ("a/b"
// becomes "a/b/keys/..."). The bucket must exist (MigrateURL, or
// `leasehold migrate`). OpenURL probes the server as New does.
func OpenURL(ctx context.Context, raw string) (*Store, error) {
	c, err := parseURL(raw)
	if err != nil {
		return nil, err
	}
	cl, tr, err := c.client(ctx)
	if err != nil {
		return nil, err
	}
	s, err := New(ctx, cl, c.bucket, &Options{Prefix: c.prefix})
	if err != nil {
		tr.CloseIdleConnections()
		return nil, err
	}
	s.tr = tr
	return s, nil
}

// MigrateURL creates the bucket a URL names, if it does not exist.
func MigrateURL(ctx context.Context, raw string) error {
	c, err := parseURL(raw)
	if err != nil {
		return err
	}
	cl, tr, err := c.client(ctx)
	if err != nil {
		return err
	}
	defer tr.CloseIdleConnections()
	in := &awss3.CreateBucketInput{Bucket: &c.bucket}
	if r := cl.Options().Region; r != DefaultRegion {
		in.CreateBucketConfiguration = &types.CreateBucketConfiguration{LocationConstraint: types.BucketLocationConstraint(r)}
	}
	_, err = cl.CreateBucket(ctx, in)
	var owned *types.BucketAlreadyOwnedByYou
	if err == nil || errors.As(err, &owned) {
		return nil
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return ctx.Err()
	}
	return &leasehold.StoreError{Store: Name, Op: "migrate", Err: fmt.Errorf("create bucket %s: %w", c.bucket, describe(err))}
}

// CheckURL reports what is wrong with raw as OpenURL would, without
// contacting anything; nil when OpenURL can use it.
func CheckURL(raw string) error {
	_, err := parseURL(raw)
	return err
}

// urlConfig is what an s3:// URL says.
type urlConfig struct {
	bucket, prefix, endpoint, region string
	access, secret, session          string
	pathStyle                        bool
}

var urlParams = []string{"endpoint", "region", "path_style", "access_key", "secret_key", "session_token"}

func parseURL(raw string) (urlConfig, error) {
	var c urlConfig
	bad := func(format string, a ...any) (urlConfig, error) {
		return c, fmt.Errorf("leasehold: %s store: URL: "+format, append([]any{Name}, a...)...)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return bad("%v", err)
	}
	c.bucket = u.Host
	if u.Scheme != Name || c.bucket == "" || u.User != nil || strings.Trim(c.bucket, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") != "" {
		return bad("%q: want s3://BUCKET[/PREFIX][?endpoint=URL&region=R...]", u.Redacted())
	}
	if c.prefix = strings.TrimPrefix(u.Path, "/"); c.prefix != "" && !strings.HasSuffix(c.prefix, "/") {
		c.prefix += "/"
	}
	q := u.Query()
	for k := range q {
		if !contains(urlParams, k) {
			return bad("unknown parameter %q (want %s)", k, strings.Join(urlParams, ", "))
		}
	}
	c.endpoint, c.region = q.Get("endpoint"), q.Get("region")
	if c.endpoint != "" {
		if e, err := url.Parse(c.endpoint); err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" {
			return bad("endpoint %q: want http://HOST[:PORT] or https://...", c.endpoint)
		}
	}
	c.pathStyle = c.endpoint != ""
	if v := q.Get("path_style"); v != "" {
		if c.pathStyle, err = strconv.ParseBool(v); err != nil {
			return bad("path_style=%s: want true or false", v)
		}
	}
	c.access, c.secret, c.session = q.Get("access_key"), q.Get("secret_key"), q.Get("session_token")
	if (c.access == "") != (c.secret == "") {
		return bad("access_key and secret_key go together")
	}
	return c, nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// maxIdlePerHost is how many idle connections to the endpoint the
// store's transport keeps for the next requests.
const maxIdlePerHost = 128

// client builds the S3 client a URL says, on an HTTP transport of its own
// (which the store's Close closes): a copy of the SDK's, which the shared
// configuration may have given a CA bundle (AWS_CA_BUNDLE).
func (c urlConfig) client(ctx context.Context) (*awss3.Client, *http.Transport, error) {
	var opts []func(*config.LoadOptions) error
	if c.region != "" {
		opts = append(opts, config.WithRegion(c.region))
	}
	if c.access != "" {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(c.access, c.secret, c.session)))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, nil, &leasehold.StoreError{Store: Name, Op: "open", Err: fmt.Errorf("bucket %s: the AWS configuration: %w", c.bucket, err)}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if bc, ok := cfg.HTTPClient.(*awshttp.BuildableClient); ok {
		tr = bc.GetTransport()
	}
	// Keep a connection for each request in flight (the SDK's transport
	// keeps 10 per host: the 11th request in flight at once dials anew).
	tr.MaxIdleConnsPerHost = max(tr.MaxIdleConnsPerHost, maxIdlePerHost)
	tr.MaxIdleConns = max(tr.MaxIdleConns, maxIdlePerHost)
	cfg.HTTPClient = &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if cfg.Region == "" {
		cfg.Region = DefaultRegion
	}
	cl := awss3.NewFromConfig(cfg, func(o *awss3.Options) {
		o.UsePathStyle = c.pathStyle
		if c.endpoint != "" {
			o.BaseEndpoint = aws.String(c.endpoint)
		}
		// Checksums only where S3 requires them: S3-compatible servers
		// differ in the trailing checksums the SDK sends by default.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	return cl, tr, nil
}
