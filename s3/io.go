package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmw "github.com/aws/aws-sdk-go-v2/aws/middleware"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// errNoDate is the cause when a response does not say the server's time.
var errNoDate = errors.New("the server's response has no Date header (the store needs the server's clock)")

// errNoVersion is the cause when a read does not say the object's write
// time or version.
var errNoVersion = errors.New("the server's response has no Last-Modified or ETag header")

// read is one GET: the object (nil when absent), parsed and checked as
// one of kinds (parseObject), and the server's time from the response's
// Date header.
func (s *Store) read(ctx context.Context, name, key string, kinds ...string) (*object, time.Time, error) {
	out, err := s.c.GetObject(ctx, &awss3.GetObjectInput{Bucket: &s.bucket, Key: &name})
	if err != nil {
		var nk interface{ ErrorCode() string }
		if errors.As(err, &nk) && nk.ErrorCode() == "NoSuchKey" {
			now, derr := serverDate(name, errHeader(err))
			return nil, now, derr
		}
		return nil, time.Time{}, err
	}
	defer out.Body.Close()
	body, err := io.ReadAll(io.LimitReader(out.Body, maxBody+1))
	if err != nil {
		return nil, time.Time{}, err
	}
	now, err := serverDate(name, rawHeader(out.ResultMetadata))
	if err != nil {
		return nil, now, err
	}
	o, err := parseObject(name, key, body, out.ETag, out.LastModified, now, kinds...)
	return o, now, err
}

// cond is the precondition of a write: "*" for If-None-Match: * (create
// only), else If-Match on that ETag.
type cond string

const create cond = "*"

// condOf is the precondition that the object o read is still there.
func condOf(o *object) cond {
	if o == nil {
		return create
	}
	return cond(o.etag)
}

// write is one conditional PUT of rec, with a new random Write field
// (which it stores in *rec, so that the caller can recognise its own write
// when the answer is lost); it returns the new ETag.
func (s *Store) write(ctx context.Context, name string, rec *record, c cond) (string, error) {
	etag, _, err := s.writeDated(ctx, name, rec, c)
	return etag, err
}

// writeDated is write, also returning the server's Date of the answer
// (the zero time when it has none or one that serverDate refuses).
func (s *Store) writeDated(ctx context.Context, name string, rec *record, c cond) (string, time.Time, error) {
	rec.Write = nonce()
	in := &awss3.PutObjectInput{
		Bucket: &s.bucket, Key: &name, Body: bytes.NewReader(rec.encode()),
		ContentType: aws.String("application/json"),
	}
	if c == create {
		in.IfNoneMatch = aws.String("*")
	} else {
		in.IfMatch = aws.String(string(c))
	}
	out, err := s.c.PutObject(ctx, in)
	if err != nil {
		return "", time.Time{}, err
	}
	date, _ := serverDate(name, rawHeader(out.ResultMetadata))
	return aws.ToString(out.ETag), date, nil
}

// conflict reports a write refused by its precondition: 412, or 409 (S3's
// answer to conditional writes that race).
func conflict(err error) bool {
	st := status(err)
	return st == http.StatusPreconditionFailed || st == http.StatusConflict
}

func status(err error) int {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

func errHeader(err error) http.Header {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) && re.Response != nil {
		return re.Response.Header
	}
	return nil
}

func rawHeader(md middleware.Metadata) http.Header {
	if r, ok := awsmw.GetRawResponse(md).(*smithyhttp.Response); ok {
		return r.Header
	}
	return nil
}

// apiError is an S3 error made short: the status, S3's code and message,
// without the SDK's request ids. It unwraps to the SDK's error.
type apiError struct {
	status  int
	code    string
	message string
	err     error
}

func (e *apiError) Error() string {
	s := fmt.Sprintf("HTTP %d %s", e.status, e.code)
	if e.message != "" {
		s += ": " + e.message
	}
	switch e.code {
	case "NoSuchBucket":
		s += " (the bucket does not exist: create it, or run leasehold migrate)"
	case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken":
		s += " (the credentials were refused)"
	}
	return s
}

func (e *apiError) Unwrap() error { return e.err }

// describe shortens the SDK's errors for messages.
func describe(err error) error {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return &apiError{status: status(err), code: ae.ErrorCode(), message: ae.ErrorMessage(), err: err}
	}
	return err
}
