package goredis_test

import (
	"context"
	"log"

	"github.com/leasehold-go/leasehold/redis/goredis"
)

// Open a Redis store over go-redis (it needs a server, so this example
// compiles but does not run).
func ExampleOpenURL() {
	ctx := context.Background()
	store, err := goredis.OpenURL(ctx, "redis://127.0.0.1:6379/0")
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
}

// Open a Redlock store on a quorum of independent Redis masters (they are
// servers, so this example compiles but does not run). Its tokens are not
// safe fences: Info().SafeTokens is false.
func ExampleOpenRedlockURL() {
	ctx := context.Background()
	store, err := goredis.OpenRedlockURL(ctx, "redlock://127.0.0.1:6379,127.0.0.1:6380,127.0.0.1:6381/0")
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
}
