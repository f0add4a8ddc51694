// Package bench compares leasehold's dynamodb store with the loop a user
// would write with the AWS SDK alone (PutItem conditioned on
// attribute_not_exists, then DeleteItem: the raw floor), side by side
// against one dynalite that TestMain starts. No DynamoDB lock client peer
// is here: the Go module proxy refused every one tried (403 for
// cirello.io/dynamolock/v2, /v4 and /v5, github.com/arielsrv/dynamolock/v2
// and github.com/Clever/dynamodb-lock-go). It holds benchmarks only, in its
// own module. From this
// folder,
//
//	GOWORK=off go test -run '^$' -bench . -benchtime 1s -args -rounds 3
//
// runs them all in 3 interleaved rounds, then prints the median rates and
// the SUMMARY line that scripts/bench-page's summary table reads.
package bench
