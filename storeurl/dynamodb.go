//go:build !leasehold_no_dynamodb

package storeurl

import "github.com/leasehold-go/leasehold/dynamodb"

// dynamodbRow is DynamoDB single-item conditional writes; the build tag
// leasehold_no_dynamodb leaves it out, with the AWS SDK
// (dynamodb_leftout.go).
func dynamodbRow() Kind {
	return Kind{
		Name: "dynamodb", Title: "DynamoDB", Schemes: []string{"dynamodb"},
		Package: "dynamodb",
		URLs:    []string{"dynamodb://table?endpoint=URL&region=R"},
		Usage: "dynamodb://table[?endpoint=URL&region=R&access_key=K&secret_key=S&max_skew=D]\n" +
			"                        one item per key (credentials also from AWS_ACCESS_KEY_ID...); `leasehold migrate` creates the table",
		CheckURL: dynamodb.CheckURL, Open: openWith(dynamodb.OpenURL), Migrate: dynamodb.MigrateURL,
		FaultBackends: []string{"dynamodb"},
		Servers:       []string{"dynalite"},
		BuildTag:      "leasehold_no_dynamodb",
		Token:         "max(item's token + 1, the acquirer's clock in µs), in the key's never-deleted item, written under the acquire's own condition",
		Notes:         "single-item conditional writes (no transactions); clock-free expiry: a waiter takes a lease after watching it unchanged for the TTL (max_skew=D trusts clocks within D instead)",
	}
}
