package serve

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestOpenAPIMatchesRoutes: every route the handler serves is in the
// OpenAPI document with its method, and every path of the document is a
// route; the served document is the checked-in one.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(OpenAPI(), &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi %q, want 3.x", doc.OpenAPI)
	}
	served := map[string]bool{}
	for _, r := range routes {
		key := strings.ToLower(r.method) + " " + r.path
		served[key] = true
		if _, ok := doc.Paths[r.path][strings.ToLower(r.method)]; !ok {
			t.Errorf("the handler serves %s, which openapi.json lacks", key)
		}
	}
	for path, ops := range doc.Paths {
		for method := range ops {
			if !served[method+" "+path] {
				t.Errorf("openapi.json has %s %s, which the handler does not serve", method, path)
			}
		}
	}
	s, _ := newServer(t)
	w := do(t, s, "GET", "/v1/openapi.json", "")
	if w.Code != http.StatusOK || w.Body.String() != string(OpenAPI()) {
		t.Errorf("GET /v1/openapi.json: %d, not the checked-in document", w.Code)
	}
	for _, r := range routes {
		if w := do(t, s, r.method, r.path, ""); w.Code == http.StatusNotFound && errorOf(t, w).Code == "not_found" {
			t.Errorf("%s %s is not routed", r.method, r.path)
		}
	}
}
