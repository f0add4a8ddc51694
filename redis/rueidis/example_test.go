package rueidis_test

import (
	"context"
	"log"

	"github.com/leasehold-go/leasehold/redis/rueidis"
)

// Open a Redis store over rueidis (it needs a server, so this example
// compiles but does not run).
func ExampleOpenURL() {
	ctx := context.Background()
	store, err := rueidis.OpenURL(ctx, "redis://127.0.0.1:6379/0")
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
}
