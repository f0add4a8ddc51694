//go:build leasehold_no_dynamodb

package storeurl

// dynamodbRow names DynamoDB in a binary built with -tags
// leasehold_no_dynamodb: its URLs are refused with ErrLeftOut. The row
// itself is in dynamodb.go.
func dynamodbRow() Kind { return leftOut("dynamodb", "DynamoDB", "leasehold_no_dynamodb", "dynamodb") }
