package s3_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	awsmw "github.com/aws/aws-sdk-go-v2/aws/middleware"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/s3"
)

func del(t testing.TB, s *s3.Store, name string) {
	t.Helper()
	b := s.Bucket()
	if _, err := s.Client().DeleteObject(ctxT(t), &awss3.DeleteObjectInput{Bucket: &b, Key: &name}); err != nil {
		t.Fatalf("delete %s: %v", name, err)
	}
}

func put(t testing.TB, s *s3.Store, name, body string) {
	t.Helper()
	b := s.Bucket()
	if _, err := s.Client().PutObject(ctxT(t), &awss3.PutObjectInput{Bucket: &b, Key: &name, Body: bytes.NewReader([]byte(body))}); err != nil {
		t.Fatalf("put %s: %v", name, err)
	}
}

// get returns the body of object name, or "" and false when there is none.
func get(t testing.TB, s *s3.Store, name string) (string, bool) {
	t.Helper()
	b := s.Bucket()
	out, err := s.Client().GetObject(ctxT(t), &awss3.GetObjectInput{Bucket: &b, Key: &name})
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() == http.StatusNotFound {
		return "", false
	}
	if err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	defer out.Body.Close()
	body, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body), true
}

// serverNow is the server's time, from the Date header of a request.
func serverNow(t testing.TB, s *s3.Store) time.Time {
	t.Helper()
	b := s.Bucket()
	out, err := s.Client().HeadBucket(ctxT(t), &awss3.HeadBucketInput{Bucket: &b})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := awsmw.GetRawResponse(out.ResultMetadata).(*smithyhttp.Response)
	now, err := http.ParseTime(r.Header.Get("Date"))
	if err != nil {
		t.Fatal(err)
	}
	return now
}

// testDeleted deletes the lease object, then the counter object, then
// both: no deletion lets a later token repeat or go back. Deleting both
// repeats a token only within the second of the last grant (the clock
// floor is whole seconds, see the package doc), so the last step first
// waits until the server's clock is past the last token.
func testDeleted(t *testing.T, v *testserver.Versity) {
	s := open(t, v, "deleted")
	g1 := acquire(t, s, "k")
	release(t, s, g1)
	var tomb struct {
		Kind  string
		Token uint64
	}
	body, _ := get(t, s, s.LeaseObject("k"))
	if err := json.Unmarshal([]byte(body), &tomb); err != nil || tomb.Kind != "released" || tomb.Token != g1.Token {
		t.Fatalf("after release the lease object is %q (%v); want a tombstone with token %d", body, err, g1.Token)
	}
	del(t, s, s.LeaseObject("k"))
	g2 := acquire(t, s, "k")
	if g2.Token <= g1.Token {
		t.Fatalf("after the lease object was deleted: token %d, earlier %d", g2.Token, g1.Token)
	}
	release(t, s, g2)
	del(t, s, s.CounterObject("k"))
	g3 := acquire(t, s, "k")
	if g3.Token <= g2.Token {
		t.Fatalf("after the counter object was deleted: token %d, earlier %d", g3.Token, g2.Token)
	}
	release(t, s, g3)
	del(t, s, s.LeaseObject("k"))
	del(t, s, s.CounterObject("k"))
	for uint64(serverNow(t, s).UnixMicro()) <= g3.Token {
		time.Sleep(100 * time.Millisecond)
	}
	g4 := acquire(t, s, "k")
	if g4.Token <= g3.Token {
		t.Fatalf("after both objects were deleted: token %d, earlier %d", g4.Token, g3.Token)
	}
	release(t, s, g4)
}

// testDeletedWhileHeld deletes a held lease's object (someone else's
// doing): the key is free, the next owner gets a larger token, and the
// first holder's renew and release are refused without touching the new
// grant.
func testDeletedWhileHeld(t *testing.T, v *testserver.Versity) {
	s := open(t, v, "deleted")
	g1 := acquire(t, s, "held")
	del(t, s, s.LeaseObject("held"))
	g2 := acquire(t, s, "held")
	if g2.Token <= g1.Token {
		t.Fatalf("token %d after the held lease's object was deleted, earlier %d", g2.Token, g1.Token)
	}
	if _, err := s.Renew(ctxT(t), g1); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("renew of the deleted grant: %v, want ErrNotHeld", err)
	}
	if err := s.Release(ctxT(t), g1); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("release of the deleted grant: %v, want ErrNotHeld", err)
	}
	if h, err := s.Holder(ctxT(t), "held"); err != nil || h.Token != g2.Token || h.Remaining <= 0 || h.Remaining > 15*time.Second {
		t.Fatalf("Holder = %+v, %v; want token %d with time left", h, err, g2.Token)
	}
	// A grant without the store's remembered ETag (another process's, the
	// CLI's) renews and releases by reading first.
	bare := leasehold.Grant{Key: g2.Key, Owner: g2.Owner, Token: g2.Token, TTL: g2.TTL}
	if _, err := s.Renew(ctxT(t), bare); err != nil {
		t.Fatalf("renew of a bare grant: %v", err)
	}
	if h, err := s.Holder(ctxT(t), "held"); err != nil || h.Label != "test" {
		t.Fatalf("after a bare renew, Holder = %+v, %v; want the label kept", h, err)
	}
	release(t, s, bare)
	if _, err := s.Renew(ctxT(t), g2); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("renew after release: %v, want ErrNotHeld", err)
	}
}
