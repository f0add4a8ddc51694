// Package bench compares leasehold's dynamodb store with the loop a user
// would write with the AWS SDK alone (PutItem conditioned on
// attribute_not_exists, then DeleteItem: the raw floor), side by side
// against one dynalite that TestMain starts. The DynamoDB lock client peer
// (cirello.io/dynamolock/v2) is not here: the module proxy this was built
// with refused it. It holds benchmarks only, in its own module. From this
// folder,
//
//	GOWORK=off go test -run '^$' -bench . -benchtime 1s -args -rounds 3
//
// runs them all in 3 interleaved rounds, then prints the median rates and
// the SUMMARY line that scripts/bench-page's summary table reads.
package bench
