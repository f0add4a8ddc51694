package dynamodb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// get is one strongly consistent GetItem of key's item, parsed and
// checked (parseItem; nil when there is none), and the time its reply
// came, by this process's monotonic clock.
func (s *Store) get(ctx context.Context, key string) (*item, time.Time, error) {
	out, err := s.c.GetItem(ctx, &awsddb.GetItemInput{
		TableName: &s.table, ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{KeyAttribute: str(key)},
	})
	at := time.Now()
	if err != nil {
		return nil, at, err
	}
	it, err := parseItem(s.object(key), key, out.Item)
	return it, at, err
}

// condOf is the condition that the item read, cur, is still there: absent
// (cur nil) or at its version.
func condOf(cur *item) (string, map[string]types.AttributeValue) {
	if cur == nil {
		return "attribute_not_exists(#k)", nil
	}
	return "#v = :v", map[string]types.AttributeValue{":v": str(cur.Version)}
}

// put writes it as key's item with one PutItem on the condition that cur
// (the item read) is still there.
func (s *Store) put(ctx context.Context, key string, it *item, cur *item) error {
	cond, vals := condOf(cur)
	names := map[string]string{"#k": KeyAttribute}
	if cur != nil {
		names = map[string]string{"#v": attrVersion}
	}
	_, err := s.c.PutItem(ctx, &awsddb.PutItemInput{
		TableName: &s.table, Item: it.encode(key),
		ConditionExpression: &cond, ExpressionAttributeNames: names, ExpressionAttributeValues: vals,
	})
	return err
}

// update is one UpdateItem of key's item on the condition that it is the
// grant of owner (its hash) with token tok: set, with vals, its values.
func (s *Store) update(ctx context.Context, key, owner string, tok uint64, set string, vals map[string]types.AttributeValue) error {
	vals[":held"] = str(stateHeld)
	vals[":o"] = str(ownerHash(owner))
	vals[":tok"] = num(fmt.Sprint(tok))
	cond := "#st = :held AND #o = :o AND #tok = :tok"
	names := map[string]string{}
	for name, attr := range updateNames {
		if strings.Contains(set, name) || strings.Contains(cond, name) {
			names[name] = attr
		}
	}
	_, err := s.c.UpdateItem(ctx, &awsddb.UpdateItemInput{
		TableName: &s.table, Key: map[string]types.AttributeValue{KeyAttribute: str(key)},
		UpdateExpression: &set, ConditionExpression: &cond, ExpressionAttributeValues: vals,
		ExpressionAttributeNames: names,
	})
	return err
}

// updateNames are the attribute names update's expressions may use (no
// name is a prefix of another: DynamoDB refuses a name it does not use).
var updateNames = map[string]string{
	"#st": attrState, "#o": attrOwner, "#tok": attrToken, "#v": attrVersion,
	"#ttl": attrTTL, "#dl": attrDeadline, "#l": attrLabel,
}

// conflict reports a write refused by its condition.
func conflict(err error) bool {
	var cf *types.ConditionalCheckFailedException
	return errors.As(err, &cf)
}

// apiError is a DynamoDB error made short: its code and message, without
// the SDK's request ids, and what it means here. It unwraps to the SDK's
// error.
type apiError struct {
	code, message string
	err           error
}

func (e *apiError) Error() string {
	s := e.code
	if e.message != "" {
		s += ": " + e.message
	}
	switch e.code {
	case "ResourceNotFoundException":
		s += " (the table does not exist: create it, or run leasehold migrate)"
	case "UnrecognizedClientException", "InvalidSignatureException", "AccessDeniedException", "ExpiredTokenException",
		"MissingAuthenticationTokenException", "IncompleteSignatureException":
		s += " (the credentials were refused)"
	}
	return s
}

func (e *apiError) Unwrap() error { return e.err }

// describe shortens the SDK's errors for messages.
func describe(err error) error {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return &apiError{code: ae.ErrorCode(), message: ae.ErrorMessage(), err: err}
	}
	return err
}
