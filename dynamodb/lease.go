package dynamodb

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/leasehold-go/leasehold"
)

// maxTries bounds the read-and-write rounds of one acquire that lose their
// conditional write to other writers of the same key.
const maxTries = 32

// Acquire reads the key's item (a strongly consistent GetItem); if there
// is none, it is free, or its lease has expired (judge), it writes the
// grant with a PutItem conditioned on the item read (absent, or at the
// version read), with a token one more than the item's, so that of racing
// acquirers exactly one write lands. When this store released the key
// last, it writes on the version its release wrote without reading first:
// one request, and a read after all if the condition refuses it.
func (s *Store) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	if err := leasehold.CheckAcquire(req, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	if err := s.checkOpen("acquire"); err != nil {
		return leasehold.Grant{}, err
	}
	obj := s.object(req.Key)
	// A token at the largest is refused on what the item says now: read.
	cur, known := s.freed.take(req.Key)
	known = known && cur.Token < math.MaxUint64
	var last *item // the last write tried
	for range maxTries {
		if !known {
			var at time.Time
			var err error
			if cur, at, err = s.get(ctx, req.Key); err != nil {
				return leasehold.Grant{}, s.err(ctx, "acquire", obj, err)
			}
			if last != nil && cur != nil && cur.Version == last.Version {
				// The last write landed, but its answer was lost and the
				// SDK's retry of it was refused by its own condition.
				s.seen.forget(req.Key)
				return grant(req, last), nil
			}
			if held, left := s.judge(req.Key, cur, at); held {
				return leasehold.Grant{}, &leasehold.HeldError{Key: req.Key, Label: cur.Label, Token: cur.Token, Remaining: left}
			}
		}
		known = false
		tok, ok := nextToken(cur.token(), time.Now())
		if !ok {
			return leasehold.Grant{}, &leasehold.StoreError{Store: Name, Op: "acquire", Err: fmt.Errorf("%s: key %q: its token is at %d, the largest a token can be: %w",
				obj, req.Key, uint64(math.MaxUint64), leasehold.ErrTokensExhausted)}
		}
		it := heldItem(req.Owner, req.Label, tok, req.TTL, time.Now())
		last = &it
		err := s.put(ctx, req.Key, &it, cur)
		if err == nil {
			s.seen.forget(req.Key)
			return grant(req, &it), nil
		}
		if !conflict(err) {
			return leasehold.Grant{}, s.err(ctx, "acquire", obj, err)
		}
	}
	// Every round lost its write to another acquirer: the key is busy.
	return leasehold.Grant{}, &leasehold.HeldError{Key: req.Key}
}

func grant(req leasehold.AcquireRequest, it *item) leasehold.Grant {
	return leasehold.Grant{Key: req.Key, Owner: req.Owner, Label: req.Label, Token: it.Token, TTL: it.ttl()}
}

// judge reports whether cur, the item of key read in a reply that came at
// at, is a lease still held, and its time left as far as this store can
// tell. Clock-free, a lease is expired once this store has seen the same
// version of it (the same write) for its TTL; with a skew bound, also once
// this process's wall clock passes the deadline the holder wrote plus the
// bound.
func (s *Store) judge(key string, cur *item, at time.Time) (bool, time.Duration) {
	if !cur.isHeld() {
		s.seen.forget(key)
		return false, 0
	}
	ttl := cur.ttl()
	left := ttl - s.seen.watched(key, cur.Version, at)
	if s.skew > 0 {
		left = min(left, time.Until(cur.deadline().Add(s.skew)))
	}
	return left > 0, left
}

// Renew extends the grant with one UpdateItem conditioned on the item
// holding g's owner and token: a new version, TTL and deadline. A lease
// that expired but that nobody took since is renewed, keeping its token.
// A renewal whose answer was lost is retried by the SDK and applies
// again, harmlessly.
func (s *Store) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	if err := leasehold.CheckRenew(g, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	if err := s.checkOpen("renew"); err != nil {
		return leasehold.Grant{}, err
	}
	it := heldItem(g.Owner, g.Label, g.Token, g.TTL, time.Now())
	err := s.update(ctx, g.Key, g.Owner, g.Token, "SET #v = :nv, #ttl = :ttl, #dl = :dl", map[string]types.AttributeValue{
		":nv": str(it.Version), ":ttl": num(strconv.FormatInt(it.TTLms, 10)), ":dl": num(strconv.FormatInt(it.DeadlineUs, 10)),
	})
	switch {
	case err == nil:
		g.TTL = it.ttl()
		return g, nil
	case conflict(err):
		return leasehold.Grant{}, leasehold.ErrNotHeld
	}
	return leasehold.Grant{}, s.err(ctx, "renew", s.object(g.Key), err)
}

// Release marks the item free with one UpdateItem conditioned on the item
// holding g's owner and token; the item, and its token, stay. A release
// whose answer was lost (the SDK's retry refused by its condition) is
// recognised by its version.
func (s *Store) Release(ctx context.Context, g leasehold.Grant) error {
	if err := leasehold.CheckRelease(g); err != nil {
		return err
	}
	if err := s.checkOpen("release"); err != nil {
		return err
	}
	nv := nonce()
	err := s.update(ctx, g.Key, g.Owner, g.Token, "SET #st = :free, #v = :nv REMOVE #o, #ttl, #dl, #l", map[string]types.AttributeValue{
		":free": str(stateFree), ":nv": str(nv),
	})
	if conflict(err) {
		var v string
		if v, err = s.version(ctx, g.Key); err == nil && v != nv {
			return leasehold.ErrNotHeld
		}
	}
	if err != nil {
		return s.err(ctx, "release", s.object(g.Key), err)
	}
	s.freed.put(g.Key, item{Token: g.Token, State: stateFree, Version: nv})
	return nil
}

// version reads the version of key's item alone; "" when there is none or
// it is not a string.
func (s *Store) version(ctx context.Context, key string) (string, error) {
	out, err := s.c.GetItem(ctx, &awsddb.GetItemInput{
		TableName: &s.table, ConsistentRead: aws.Bool(true),
		Key:                      map[string]types.AttributeValue{KeyAttribute: str(key)},
		ProjectionExpression:     aws.String("#v"),
		ExpressionAttributeNames: map[string]string{"#v": attrVersion},
	})
	if err != nil {
		return "", err
	}
	v, _ := out.Item[attrVersion].(*types.AttributeValueMemberS)
	if v == nil {
		return "", nil
	}
	return v.Value, nil
}

// Holder reads the key's item and reports its holder and time left as far
// as this store can tell (judge): clock-free, a lease this store has not
// watched for its TTL is reported held, with at most its TTL left.
func (s *Store) Holder(ctx context.Context, key string) (leasehold.Holder, error) {
	if err := leasehold.CheckHolder(key); err != nil {
		return leasehold.Holder{}, err
	}
	if err := s.checkOpen("holder"); err != nil {
		return leasehold.Holder{}, err
	}
	cur, at, err := s.get(ctx, key)
	if err != nil {
		return leasehold.Holder{}, s.err(ctx, "holder", s.object(key), err)
	}
	held, left := s.judge(key, cur, at)
	if !held {
		return leasehold.Holder{}, leasehold.ErrNotHeld
	}
	return leasehold.Holder{Key: key, Label: cur.Label, Token: cur.Token, Remaining: left}, nil
}
