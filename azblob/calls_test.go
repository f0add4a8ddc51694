package azblob_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/azblob"
	"github.com/leasehold-go/leasehold/internal/callcount"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

// kindOf names a request to the Blob API as "what blob": what is the
// lease action, the comp (metadata) or the method (HEAD: a read of the
// properties); blob is keys or tokens.
func kindOf(r *http.Request) string {
	what := r.Method
	if comp := r.URL.Query().Get("comp"); comp == "lease" {
		what = "lease-" + callcount.Header(r, "x-ms-lease-action")
	} else if comp != "" {
		what = comp
	}
	return what + " " + callcount.Segment(r, "keys", "tokens")
}

// countedStore is a store on container name of a whose requests c counts.
func countedStore(t *testing.T, a *testserver.Azurite, name string, c *callcount.Counter) *azblob.Store {
	t.Helper()
	cc, err := container.NewClientFromConnectionString(a.ConnectionString(), name,
		&container.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: c}})
	if err != nil {
		t.Fatal(err)
	}
	s := azblob.New(cc)
	if err := s.Migrate(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	return s
}

// testCalls counts the requests of each call on one key. The first
// acquire reads the lease blob and creates it, takes the lease, reads and
// raises the counter and writes the token (6). A renewal and a release
// are one lease operation each, on the ETag the acquire left. An acquire
// after this store's own release takes the lease on the ETag the release
// left and writes the token, without a read: 2, and a cycle 3, where the
// SDK's bare acquire+release loop sends 2. Tokens are at least the
// server's time in µs, so the counter is raised again (a read and a
// write) when the server's Date passes the lease blob's ceiling: at most
// once per second of the server's clock, so at most 2 + the seconds the
// cycles took (the bound is on the count, not on the time). An acquire
// after another store wrote the blob falls back to a read (4: the refused
// acquire, the read, the acquire, the token; +2 if it raises the
// counter), and its token is still above.
func testCalls(t *testing.T, a *testserver.Azurite) {
	c := callcount.New(kindOf)
	s := countedStore(t, a, "calls", c)
	c.Take()
	want := func(what string, lo, hi int) { t.Helper(); c.Want(t, what, lo, hi) }
	g := acquire(t, s, "k", "owner-calls-aaaaaaaaaaaaaa")
	want("first acquire", 6, 6)
	if _, err := s.Renew(ctxT(t), g); err != nil {
		t.Fatal(err)
	}
	want("renew", 1, 1)
	if err := s.Release(ctxT(t), g); err != nil {
		t.Fatal(err)
	}
	want("release", 1, 1)
	last, start := g.Token, time.Now()
	for range 50 {
		g = acquire(t, s, "k", "owner-calls-aaaaaaaaaaaaaa")
		if err := s.Release(ctxT(t), g); err != nil {
			t.Fatal(err)
		}
		if g.Token <= last {
			t.Fatalf("token %d after %d", g.Token, last)
		}
		last = g.Token
	}
	raises := 2 + int(time.Since(start)/time.Second)
	want("50 acquire+release cycles", 150, 150+2*raises)

	other := countedStore(t, a, "calls", callcount.New(kindOf))
	g2 := acquire(t, other, "k", "owner-other-aaaaaaaaaaaaaa")
	if err := other.Release(ctxT(t), g2); err != nil {
		t.Fatal(err)
	}
	c.Take()
	if g = acquire(t, s, "k", "owner-calls-aaaaaaaaaaaaaa"); g.Token <= g2.Token {
		t.Fatalf("token %d after another store's %d", g.Token, g2.Token)
	}
	want("acquire after another store's release", 4, 6)
	bare := leasehold.Grant{Key: g.Key, Owner: g.Owner, Token: g.Token, TTL: 15 * time.Second}
	if err := s.Release(ctxT(t), bare); err != nil {
		t.Fatal(err)
	}
	want("release of a grant from elsewhere (a read first)", 2, 2)
}
