package fence_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/leasehold-go/leasehold/fence"
)

// An HTTP service checks the Fencing-Token header of every write. The
// handlers of one resource run one at a time, so that a stalled older holder
// cannot finish its write after a newer holder's. This protects one process;
// a service with several replicas fences its writes in the shared database
// ([fence.Table] in the handler's transaction).
func ExampleMiddleware() {
	var guard fence.MemoryGuard
	write := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, _ := fence.TokenFrom(r.Context())
		fmt.Fprintf(w, "stored %s with token %d\n", r.URL.Path, token)
	})
	handler := fence.Middleware(&guard, write)

	for _, token := range []string{"7", "8", "7", "x"} {
		req := httptest.NewRequest(http.MethodPut, "/docs/1", nil)
		req.Header.Set(fence.Header, token)
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		fmt.Print(rec.Code, " ", rec.Body.String())
	}
	// Output:
	// 200 stored /docs/1 with token 7
	// 200 stored /docs/1 with token 8
	// 409 fence: stale fencing token 7 for /docs/1: a newer holder wrote with token 8
	// 400 fence: malformed fencing token: "x" is not a decimal number
}
