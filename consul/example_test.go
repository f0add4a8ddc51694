package consul_test

import (
	"context"
	"log"

	"github.com/leasehold-go/leasehold/consul"
)

// Open a Consul store through an agent, keeping its keys under locks/ (it
// needs a server, so this example compiles but does not run). The ACL token
// comes from $CONSUL_HTTP_TOKEN, or token= in the URL.
func ExampleOpenURL() {
	ctx := context.Background()
	store, err := consul.OpenURL(ctx, "consul://127.0.0.1:8500/locks")
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
}
