package s3_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/s3"
)

func testBadInput(t *testing.T, v *testserver.Versity) {
	_, err := s3.OpenURL(ctxT(t), storeURL(v, "nosuchbucket"))
	wantErr(t, "missing bucket", err, "s3", "open", "bucket nosuchbucket", "NoSuchBucket")

	bad := strings.Replace(storeURL(v, "badinput"), "secret_key="+testserver.VersitySecretKey, "secret_key=wrong", 1)
	_, err = s3.OpenURL(ctxT(t), bad)
	wantErr(t, "refused credentials", err, "s3", "open", "bucket badinput", "403", "credentials were refused")

	s := open(t, v, "badinput")
	req := leasehold.AcquireRequest{Key: "k", Owner: leasehold.NewOwnerID(), TTL: 15 * time.Second}
	for _, ttl := range []time.Duration{500 * time.Millisecond, 25 * time.Hour} {
		r := req
		r.TTL = ttl
		if _, err := s.Acquire(ctxT(t), r); !errors.Is(err, leasehold.ErrInvalidTTL) || !strings.Contains(err.Error(), ttl.String()) {
			t.Errorf("TTL %v: %v, want ErrInvalidTTL naming the TTL", ttl, err)
		}
	}

	// Someone else's object at a key's name: refused, named, left alone.
	for _, foreign := range []string{"not ours", `{"leasehold":1,"kind":"lease","key":"other","token":5}`} {
		put(t, s, s.LeaseObject("foreign"), foreign)
		r := req
		r.Key = "foreign"
		_, err = s.Acquire(ctxT(t), r)
		wantErr(t, "someone else's object", err, "s3", "acquire", "bucket badinput object lh/keys/foreign", "not a leasehold record")
		_, err = s.Holder(ctxT(t), "foreign")
		wantErr(t, "Holder of someone else's object", err, "s3", "holder", "lh/keys/foreign", "not a leasehold record")
		if body, _ := get(t, s, s.LeaseObject("foreign")); body != foreign {
			t.Errorf("someone else's object was changed to %q", body)
		}
	}

	// Someone else's counter object: the acquire fails before it writes
	// the lease, and the token after it is repaired is still new. The
	// tombstone is put back without its ceiling, which would cover the
	// next token: without one the acquire reads the counter.
	g1 := acquire(t, s, "badcounter")
	release(t, s, g1)
	put(t, s, s.LeaseObject("badcounter"), tombBody("badcounter", g1.Token))
	put(t, s, s.CounterObject("badcounter"), "not ours")
	r := req
	r.Key = "badcounter"
	_, err = s.Acquire(ctxT(t), r)
	wantErr(t, "someone else's counter object", err, "s3", "acquire", "lh/tokens/badcounter", "not a leasehold record")
	if _, err := s.Holder(ctxT(t), "badcounter"); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("after a failed acquire, Holder: %v, want ErrNotHeld (nothing left held)", err)
	}
	del(t, s, s.CounterObject("badcounter"))
	if g2 := acquire(t, s, "badcounter"); g2.Token <= g1.Token {
		t.Errorf("token %d after a failed acquire, earlier %d: reused", g2.Token, g1.Token)
	}
}

func wantErr(t *testing.T, what string, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	t.Logf("%s: %v", what, err)
	if !errors.Is(err, leasehold.ErrStore) {
		t.Errorf("%s: %v is not a store error", what, err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %q does not name %q", what, err, p)
		}
	}
}

func testMigrate(t *testing.T, v *testserver.Versity) {
	u := storeURL(v, "migrated")
	for range 2 { // idempotent
		if err := s3.MigrateURL(ctxT(t), u); err != nil {
			t.Fatalf("MigrateURL: %v", err)
		}
	}
	s := open(t, v, "migrated")
	release(t, s, acquire(t, s, "k"))
}

func TestCheckURL(t *testing.T) {
	for _, u := range []string{
		"s3://bucket", "s3://bucket/prefix/deeper", "s3://b?endpoint=http://127.0.0.1:7070&region=eu-west-1",
		"s3://b?path_style=false&access_key=a&secret_key=s&session_token=t",
	} {
		if err := s3.CheckURL(u); err != nil {
			t.Errorf("CheckURL(%q): %v", u, err)
		}
	}
	for _, u := range []string{
		"s3://", "s3:///prefix", "http://bucket", "s3://user@bucket", "s3://b?nosuch=1", "s3://b?endpoint=127.0.0.1:7070",
		"s3://b?path_style=maybe", "s3://b?access_key=a", "s3://b%2F",
	} {
		if err := s3.CheckURL(u); err == nil || !strings.Contains(err.Error(), "s3 store") {
			t.Errorf("CheckURL(%q): %v, want an error naming the s3 store", u, err)
		}
	}
}
