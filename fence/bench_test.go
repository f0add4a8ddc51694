package fence

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

func BenchmarkMemoryGuardAdmit(b *testing.B) {
	ctx := context.Background()
	var g MemoryGuard
	b.RunParallel(func(pb *testing.PB) {
		var tok uint64
		for pb.Next() {
			tok++
			g.Admit(ctx, "r", tok) // some stale, some admitted
		}
	})
}

// BenchmarkMiddleware compares a bare handler with the same handler behind
// the middleware (serialised per resource, the default) and with
// UnsafeConcurrent, on in-process requests.
func BenchmarkMiddleware(b *testing.B) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	var g1, g2 MemoryGuard
	for _, bc := range []struct {
		name string
		h    http.Handler
	}{
		{"bare", ok},
		{"middleware", Middleware(&g1, ok)},
		{"unsafe-concurrent", MiddlewareOptions{UnsafeConcurrent: true}.Wrap(&g2, ok)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodPut, "/r", nil)
			w := httptest.NewRecorder()
			for i := 0; b.Loop(); i++ {
				req.Header.Set(Header, strconv.Itoa(i))
				bc.h.ServeHTTP(w, req)
			}
		})
	}
}
