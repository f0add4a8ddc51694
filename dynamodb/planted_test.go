package dynamodb_test

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	awsddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/dynamodb"
)

// A valid owner hash and version for planted items.
const (
	plantOwner   = "0123456789abcdef0123456789abcdef"
	plantVersion = "0123456789abcdef"
)

// attrs builds an item from name, value pairs: a value "N:..." is a
// number, "S:..." a string, "BOOL:..." a boolean.
func attrs(pairs ...string) map[string]types.AttributeValue {
	m := map[string]types.AttributeValue{}
	for i := 0; i+1 < len(pairs); i += 2 {
		kind, v, _ := strings.Cut(pairs[i+1], ":")
		switch kind {
		case "N":
			m[pairs[i]] = &types.AttributeValueMemberN{Value: v}
		case "S":
			m[pairs[i]] = &types.AttributeValueMemberS{Value: v}
		case "BOOL":
			m[pairs[i]] = &types.AttributeValueMemberBOOL{Value: v == "true"}
		}
	}
	return m
}

// freeItem and heldItem are valid items of key, then more pairs, which
// replace or add attributes.
func freeItem(key string, tok uint64, more ...string) map[string]types.AttributeValue {
	m := attrs("key", "S:"+key, "leasehold", "N:1", "state", "S:free", "token", fmt.Sprint("N:", tok), "version", "S:"+plantVersion)
	maps.Copy(m, attrs(more...))
	return m
}

func heldItem(key string, tok uint64, more ...string) map[string]types.AttributeValue {
	m := freeItem(key, tok, "state", "S:held", "owner", "S:"+plantOwner, "ttl_ms", "N:15000",
		"deadline_us", fmt.Sprint("N:", time.Now().Add(15*time.Second).UnixMicro()))
	maps.Copy(m, attrs(more...))
	return m
}

func plant(t testing.TB, s *dynamodb.Store, m map[string]types.AttributeValue) {
	t.Helper()
	if _, err := s.Client().PutItem(ctxT(t), &awsddb.PutItemInput{TableName: ptr(s.Table()), Item: m}); err != nil {
		t.Fatalf("plant %v: %v", m, err)
	}
}

func raw(t testing.TB, s *dynamodb.Store, key string) map[string]types.AttributeValue {
	t.Helper()
	out, err := s.Client().GetItem(ctxT(t), &awsddb.GetItemInput{TableName: ptr(s.Table()), Key: itemKey(key), ConsistentRead: ptr(true)})
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	return out.Item
}

func del(t testing.TB, s *dynamodb.Store, key string) {
	t.Helper()
	if _, err := s.Client().DeleteItem(ctxT(t), &awsddb.DeleteItemInput{TableName: ptr(s.Table()), Key: itemKey(key)}); err != nil {
		t.Fatalf("delete %s: %v", key, err)
	}
}

func ptr[T any](v T) *T { return &v }

// wantExhausted checks that err refuses an acquire of key because its
// tokens are exhausted: a store error naming the key, not a held error.
func wantExhausted(t *testing.T, what, key string, err error) {
	t.Helper()
	if !errors.Is(err, leasehold.ErrTokensExhausted) || errors.Is(err, leasehold.ErrHeld) {
		t.Fatalf("%s: %v; want ErrTokensExhausted", what, err)
	}
	wantErr(t, what, err, "dynamodb", "acquire", fmt.Sprintf("%q", key))
}

// testTokensExhausted plants items at and near 2^64-1, as someone with
// write access to the table could: the store refuses the grant rather
// than wrap to a lower token, and holds nothing afterwards.
func testTokensExhausted(t *testing.T, ep string) {
	s := open(t, ep, "tokens")
	req := func(key string) leasehold.AcquireRequest {
		return leasehold.AcquireRequest{Key: key, Owner: leasehold.NewOwnerID(), Label: "test", TTL: 15 * time.Second}
	}
	plant(t, s, freeItem("max", math.MaxUint64))
	_, err := s.Acquire(ctxT(t), req("max"))
	wantExhausted(t, "an item at 2^64-1", "max", err)
	if _, err := s.Holder(ctxT(t), "max"); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("after a refused acquire, Holder: %v, want ErrNotHeld", err)
	}
	if got := raw(t, s, "max"); !reflect.DeepEqual(got, freeItem("max", math.MaxUint64)) {
		t.Fatalf("the planted item was changed to %v", got)
	}

	// One below it: the largest token is granted once, then no more.
	plant(t, s, freeItem("near", math.MaxUint64-1))
	g := acquire(t, s, "near")
	if g.Token != math.MaxUint64 {
		t.Fatalf("an item at 2^64-2: token %d, want 2^64-1", g.Token)
	}
	release(t, s, g)
	_, err = s.Acquire(ctxT(t), req("near"))
	wantExhausted(t, "after the token 2^64-1", "near", err)
}

// testPlanted plants items whose attributes are missing, of another type,
// out of range or unknown: each is refused as foreign, naming the item,
// and left alone. A planted lease with a huge ttl_ms is one of them.
func testPlanted(t *testing.T, ep string) {
	s := open(t, ep, "planted")
	for _, c := range []struct {
		what   string
		item   map[string]types.AttributeValue
		reason string
	}{
		{"not leasehold's", attrs("key", "S:k", "payload", "S:someone else's"), "leasehold"},
		{"another format", freeItem("k", 5, "leasehold", "N:2"), "leasehold"},
		{"huge ttl_ms", heldItem("k", 5, "ttl_ms", "N:9223372036854775807"), "ttl_ms"},
		{"ttl_ms above the maximum", heldItem("k", 5, "ttl_ms", "N:86400001"), "ttl_ms"},
		{"negative ttl_ms", heldItem("k", 5, "ttl_ms", "N:-15000"), "ttl_ms"},
		{"fractional ttl_ms", heldItem("k", 5, "ttl_ms", "N:15000.5"), "ttl_ms"},
		{"token 0", freeItem("k", 0), "token"},
		{"negative token", freeItem("k", 5, "token", "N:-1"), "token"},
		{"token above 2^64-1", freeItem("k", 5, "token", "N:18446744073709551616"), "token"},
		{"token a string", freeItem("k", 5, "token", "S:9"), "token"},
		{"held without owner", func() map[string]types.AttributeValue { m := heldItem("k", 5); delete(m, "owner"); return m }(), "owner"},
		{"held with a short owner", heldItem("k", 5, "owner", "S:abc"), "owner"},
		{"free with a ttl", freeItem("k", 5, "ttl_ms", "N:15000"), "ttl_ms"},
		{"unknown state", freeItem("k", 5, "state", "S:locked"), "state"},
		{"version not hex", freeItem("k", 5, "version", "S:xyz"), "version"},
		{"an unknown attribute", heldItem("k", 5, "extra", "BOOL:true"), "extra"},
		{"deadline far out", heldItem("k", 5, "deadline_us", "N:99999999999999999999"), "deadline_us"},
	} {
		plant(t, s, c.item)
		_, err := s.Acquire(ctxT(t), leasehold.AcquireRequest{Key: "k", Owner: leasehold.NewOwnerID(), TTL: 15 * time.Second})
		wantForeign(t, c.what+": acquire", err, `table planted item key="k"`, c.reason)
		_, err = s.Holder(ctxT(t), "k")
		wantForeign(t, c.what+": Holder", err, `table planted item key="k"`, c.reason)
		if got := raw(t, s, "k"); !reflect.DeepEqual(got, c.item) {
			t.Errorf("%s: the planted item was changed to %v", c.what, got)
		}
		del(t, s, "k")
		release(t, s, acquire(t, s, "k")) // the key works once it is gone
	}
}

// wantForeign checks that err is a store error around a
// *leasehold.ForeignRecordError naming object, whose reason names reason.
func wantForeign(t *testing.T, what string, err error, object, reason string) {
	t.Helper()
	var fe *leasehold.ForeignRecordError
	if !errors.As(err, &fe) || !errors.Is(err, leasehold.ErrStore) || !errors.Is(err, leasehold.ErrForeignRecord) {
		t.Fatalf("%s: %v; want a store error around a ForeignRecordError", what, err)
	}
	if fe.Object != object || !strings.Contains(fe.Reason, reason) {
		t.Fatalf("%s: object %q reason %q; want object %q, a reason naming %q", what, fe.Object, fe.Reason, object, reason)
	}
}
