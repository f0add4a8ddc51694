package serve

import (
	_ "embed"
	"net/http"
)

// route is one endpoint of the API. The OpenAPI document (openapi.json)
// lists exactly these; a test holds the two together.
type route struct {
	method, path string
	handler      func(*Server) http.HandlerFunc
}

var routes = []route{
	{"POST", "/v1/acquire", (*Server).acquire},
	{"POST", "/v1/renew", (*Server).renew},
	{"POST", "/v1/renew-many", (*Server).renewMany},
	{"POST", "/v1/release", (*Server).release},
	{"GET", "/v1/holder", (*Server).holder},
	{"GET", "/v1/list", (*Server).list},
	{"GET", "/v1/watch", (*Server).watch},
	{"GET", "/v1/info", (*Server).infoHandler},
	{"POST", "/v1/fence/check", (*Server).fenceCheck},
	{"GET", "/metrics", (*Server).metricsRoute},
	{"GET", "/v1/openapi.json", (*Server).openAPI},
	{"POST", "/v1/admin/break", (*Server).breakLease},
}

//go:embed openapi.json
var openAPIDoc []byte

// OpenAPI returns the API's OpenAPI 3 document, as GET /v1/openapi.json
// serves it.
func OpenAPI() []byte { return append([]byte(nil), openAPIDoc...) }

func (s *Server) openAPI() http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(openAPIDoc)
	}
}
