package fence_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/leasehold-go/leasehold/fence"
)

// A client whose transport is a RoundTripper sends the token of each
// request's context (a lease's context) in the Fencing-Token header.
func ExampleRoundTripper() {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println("server got", fence.Header+":", r.Header.Get(fence.Header))
	}))
	defer server.Close()

	client := &http.Client{Transport: &fence.RoundTripper{Base: server.Client().Transport}}
	ctx := fence.WithToken(context.Background(), 17) // e.g. the lease's context
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, server.URL, nil)
	resp, err := client.Do(req)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println("caller's request untouched:", req.Header.Get(fence.Header) == "")
	server.Client().CloseIdleConnections()
	// Output:
	// server got Fencing-Token: 17
	// caller's request untouched: true
}
