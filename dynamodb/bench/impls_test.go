package bench

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/leasehold-go/leasehold/dynamodb"
	"github.com/leasehold-go/leasehold/internal/benchcycle"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

const ttl = 10 * time.Second

// impls returns the implementations, on one DynamoDB client (one HTTP
// transport), closed when b ends.
func impls(b *testing.B) []benchcycle.Impl {
	url := "dynamodb://" + table + "?endpoint=" + server.Endpoint() + "&region=" + testserver.DynaliteRegion +
		"&access_key=" + testserver.DynaliteAccessKey + "&secret_key=" + testserver.DynaliteSecretKey
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := dynamodb.OpenURL(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	lc := benchcycle.NewClient(b, st)
	return []benchcycle.Impl{
		{Name: "raw-sdk", New: raw(st.Client())},
		{Name: "leasehold", New: benchcycle.Store(st, ttl)},
		{Name: "lh-client", New: benchcycle.Client(lc, ttl)},
	}
}

// raw is the floor, and the loop a user would write with the SDK alone:
// create the key's item if it does not exist (PutItem conditioned on
// attribute_not_exists), then delete it. An item in the way is
// benchcycle.ErrHeld.
func raw(c *awsddb.Client) func(*testing.B, string, bool) (benchcycle.Cycle, func()) {
	return func(_ *testing.B, key string, _ bool) (benchcycle.Cycle, func()) {
		k := map[string]types.AttributeValue{dynamodb.KeyAttribute: &types.AttributeValueMemberS{Value: "peers/" + key}}
		return func(ctx context.Context) error {
			_, err := c.PutItem(ctx, &awsddb.PutItemInput{
				TableName: aws.String(table), Item: k,
				ConditionExpression: aws.String("attribute_not_exists(#k)"), ExpressionAttributeNames: map[string]string{"#k": dynamodb.KeyAttribute},
			})
			var cf *types.ConditionalCheckFailedException
			if errors.As(err, &cf) {
				return benchcycle.ErrHeld
			}
			if err != nil {
				return err
			}
			_, err = c.DeleteItem(ctx, &awsddb.DeleteItemInput{TableName: aws.String(table), Key: k})
			return err
		}, nil
	}
}
