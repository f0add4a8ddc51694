package dynamodb_test

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/dynamodb"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

func testBadInput(t *testing.T, d *testserver.Dynalite) {
	ep := d.Endpoint()
	_, err := dynamodb.OpenURL(ctxT(t), storeURL(ep, "nosuchtable"))
	wantErr(t, "missing table", err, "dynamodb", "open", "table nosuchtable", "ResourceNotFoundException", "does not exist")

	// Credentials refused: dynalite checks that requests are signed, not
	// by whom, so a proxy answers as DynamoDB does for an unknown key.
	p := newProxy(t, ep)
	bad := strings.Replace(storeURL(p.URL, "badinput"), "access_key="+testserver.DynaliteAccessKey, "access_key=AKIDWRONG", 1)
	_, err = dynamodb.OpenURL(ctxT(t), bad)
	wantErr(t, "refused credentials", err, "dynamodb", "open", "table badinput", "UnrecognizedClientException", "credentials were refused")

	// A table whose key is not the store's.
	s := open(t, ep, "badinput")
	_, err = s.Client().CreateTable(ctxT(t), &awsddb.CreateTableInput{
		TableName:            aws.String("otherkey"),
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}},
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = dynamodb.OpenURL(ctxT(t), storeURL(ep, "otherkey"))
	wantErr(t, "a table keyed otherwise", err, "dynamodb", "open", "table otherkey", `["id" HASH]`)
	if !errors.Is(err, dynamodb.ErrBadTable) {
		t.Errorf("a table keyed otherwise: %v, want ErrBadTable", err)
	}
	if err := dynamodb.MigrateURL(ctxT(t), storeURL(ep, "otherkey")); !errors.Is(err, dynamodb.ErrBadTable) {
		t.Errorf("migrate of a table keyed otherwise: %v, want ErrBadTable", err)
	}

	// TTLs the store cannot honour.
	req := leasehold.AcquireRequest{Key: "k", Owner: leasehold.NewOwnerID(), TTL: 15 * time.Second}
	for _, ttl := range []time.Duration{500 * time.Millisecond, 25 * time.Hour} {
		r := req
		r.TTL = ttl
		if _, err := s.Acquire(ctxT(t), r); !errors.Is(err, leasehold.ErrInvalidTTL) || !strings.Contains(err.Error(), ttl.String()) {
			t.Errorf("TTL %v: %v, want ErrInvalidTTL naming the TTL", ttl, err)
		}
	}

	// Someone else's item at a key's name: refused, named, left alone.
	theirs := attrs("key", "S:foreign", "owner", "S:billing", "amount", "N:12")
	plant(t, s, theirs)
	r := req
	r.Key = "foreign"
	_, err = s.Acquire(ctxT(t), r)
	wantErr(t, "someone else's item", err, "dynamodb", "acquire", `table badinput item key="foreign"`, "not a leasehold record")
	_, err = s.Holder(ctxT(t), "foreign")
	wantErr(t, "Holder of someone else's item", err, "dynamodb", "holder", `key="foreign"`, "not a leasehold record")
	if got := raw(t, s, "foreign"); len(got) != len(theirs) {
		t.Errorf("someone else's item was changed to %v", got)
	}

	testUnreachable(t, ep)
}

// testUnreachable loses the server after the store opened: the acquire
// fails naming the store, the item and the cause, and once the server is
// back nothing is held and the next token is new.
func testUnreachable(t *testing.T, ep string) {
	direct := open(t, ep, "badinput")
	g1 := acquire(t, direct, "unreachable")
	release(t, direct, g1)
	p := newProxy(t, ep)
	s := open(t, p.URL, "badinput")
	p.Close() // the endpoint now refuses connections
	if c, err := net.Dial("tcp", strings.TrimPrefix(p.URL, "http://")); err == nil {
		c.Close()
		t.Fatal("the closed proxy still accepts connections")
	}
	_, err := s.Acquire(ctxT(t), leasehold.AcquireRequest{Key: "unreachable", Owner: leasehold.NewOwnerID(), TTL: 15 * time.Second})
	wantErr(t, "unreachable endpoint", err, "dynamodb", "acquire", `table badinput item key="unreachable"`, "connection refused")
	if _, err := direct.Holder(ctxT(t), "unreachable"); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("after a failed acquire, Holder: %v, want ErrNotHeld (nothing left held)", err)
	}
	if g2 := acquire(t, direct, "unreachable"); g2.Token <= g1.Token {
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

func testMigrate(t *testing.T, ep string) {
	u := storeURL(ep, "migrated")
	for range 2 { // idempotent
		if err := dynamodb.MigrateURL(ctxT(t), u); err != nil {
			t.Fatalf("MigrateURL: %v", err)
		}
	}
	s := open(t, ep, "migrated")
	release(t, s, acquire(t, s, "k"))
}

func TestCheckURL(t *testing.T) {
	for _, u := range []string{
		"dynamodb://leases", "dynamodb://my.table-1_x?endpoint=http://127.0.0.1:4567&region=eu-west-1",
		"dynamodb://leases?access_key=a&secret_key=s&session_token=t", "dynamodb://leases?max_skew=500ms", "dynamodb://leases/",
	} {
		if err := dynamodb.CheckURL(u); err != nil {
			t.Errorf("CheckURL(%q): %v", u, err)
		}
	}
	for _, u := range []string{
		"dynamodb://", "dynamodb://ab", "dynamodb://t%2Fx", "dynamodb://table/sub", "http://table", "dynamodb://user@table",
		"dynamodb://table?nosuch=1", "dynamodb://table?endpoint=127.0.0.1:4567", "dynamodb://table?access_key=a",
		"dynamodb://table?session_token=t", "dynamodb://table?max_skew=0s", "dynamodb://table?max_skew=2h",
		"dynamodb://table?max_skew=soon", "dynamodb://table?region=a&region=b", "dynamodb:table",
	} {
		if err := dynamodb.CheckURL(u); err == nil || !strings.Contains(err.Error(), "dynamodb store") {
			t.Errorf("CheckURL(%q): %v, want an error naming the dynamodb store", u, err)
		}
	}
}
