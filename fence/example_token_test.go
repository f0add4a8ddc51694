package fence_test

import (
	"context"
	"fmt"

	"github.com/leasehold-go/leasehold/fence"
)

// A lease's context carries its token; code deep in the call stack reads it
// back to fence its side effects.
func ExampleTokenFrom() {
	ctx := fence.WithToken(context.Background(), 42)

	if token, ok := fence.TokenFrom(ctx); ok {
		fmt.Println("writing with token", token)
	}
	_, ok := fence.TokenFrom(context.Background())
	fmt.Println("plain context has a token:", ok)
	// Output:
	// writing with token 42
	// plain context has a token: false
}
