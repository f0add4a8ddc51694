package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold/internal/wire"
)

// codes are the error codes the API documents.
var codes = []string{wire.CodeBadRequest, wire.CodeTooLarge, wire.CodeTimeout, wire.CodeUnauthorized, wire.CodeForbidden, wire.CodeInvalidKey, wire.CodeInvalidTTL, wire.CodeInvalidWait,
	wire.CodeHeld, wire.CodeNotHeld, wire.CodeTokensExhausted, wire.CodeForeignRecord, wire.CodeUnavailable,
	wire.CodeNotImplemented, wire.CodeNotFound, wire.CodeMethod, wire.CodeOverCapacity}

// flushEnds is a recorder whose first Flush ends the request, so that a
// watch stream answers its ready event and returns.
type flushEnds struct {
	*httptest.ResponseRecorder
	end context.CancelFunc
}

func (f flushEnds) Flush() { f.ResponseRecorder.Flush(); f.end() }

// FuzzHandler sends one request to a server over a new memory store and
// checks what any request must get: no panic; an answer in the documented
// statuses; every refusal a JSON error with a documented code and a
// message; a refused acquire holds nothing, a granted one exactly its key;
// a long owner id never in a refusal.
func FuzzHandler(f *testing.F) {
	f.Add("POST", "/v1/acquire", []byte(`{"key":"k","owner":"0123456789abcdef","label":"l","ttl_ms":1000}`))
	f.Add("POST", "/v1/acquire", []byte(`{"key":"k","owner":"0123456789abcdef","ttl_ms":0,"wait_ms":-1}`))
	f.Add("POST", "/v1/renew", []byte(`{"key":"k","owner":"o-owner-0123456789","token":"1","ttl_ms":1000,"handle":"x"}`))
	f.Add("POST", "/v1/release", []byte(`{"key":"k","owner":"o-owner-0123456789","token":"18446744073709551615"}`))
	f.Add("GET", "/v1/holder?key=k", []byte(nil))
	f.Add("GET", "/v1/list?prefix=a%00", []byte(nil))
	f.Add("GET", "/v1/watch?key=k&mode=notify", []byte(nil))
	f.Add("GET", "/v1/info", []byte(nil))
	f.Add("POST", "/v1/fence/check", []byte(`{"key":"k","token":"1"}`))
	f.Add("GET", "/v1/watch?prefix=jobs/", []byte(nil))
	f.Add("GET", "/metrics", []byte(nil))
	f.Add("DELETE", "/v1/acquire", []byte(`{}`))
	f.Add("POST", "/v1/admin/break", []byte(`{"key":"k","token":"1"}`))
	f.Add("GET", "/?prefix=%3Cscript%3E", []byte(nil))
	f.Add("GET", "/?prefix=a%00", []byte(nil))
	f.Add("GET", "/dashboard/events?prefix=k", []byte(nil))
	f.Add("POST", "/dashboard/break", []byte(`{"key":"k"}`))
	f.Add("POST", "/dashboard/login", []byte(`token=x`))
	f.Fuzz(func(t *testing.T, method, target string, body []byte) {
		r, err := http.NewRequest(method, "http://x"+target, bytes.NewReader(body))
		if err != nil || !strings.HasPrefix(target, "/") {
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r = r.WithContext(ctx)
		s, st := newServer(t)
		w := flushEnds{httptest.NewRecorder(), cancel}
		s.ServeHTTP(w, r)
		checkAnswer(t, w.ResponseRecorder, r, body)
		hs, err := st.List(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		granted := w.Code == http.StatusOK && r.Method == "POST" && r.URL.Path == "/v1/acquire"
		if granted != (len(hs) == 1) || len(hs) > 1 {
			t.Fatalf("%s %s answered %d and left holders %v", method, target, w.Code, hs)
		}
	})
}

func checkAnswer(t *testing.T, w *httptest.ResponseRecorder, r *http.Request, body []byte) {
	t.Helper()
	if strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") && w.Code != 301 && w.Code != 307 && w.Code != 308 {
		checkPage(t, w, r) // (the mux's redirects of unclean paths are HTML too)
		return
	}
	switch {
	case w.Code == 403 && (r.URL.Path == "/v1/admin/break" || r.URL.Path == "/dashboard/break"):
		// no tokens: nobody to name; the dashboard's break off its page
	case w.Code == 303 && strings.HasPrefix(r.URL.Path, "/dashboard/"):
		// signed in or out: back to the page
	case slices.Contains([]int{200, 204, 301, 307, 308, 400, 404, 405, 413, 501}, w.Code):
	default:
		t.Fatalf("%s %s: status %d (%s)", r.Method, r.URL, w.Code, w.Body)
	}
	if w.Code < 400 {
		return
	}
	var e wire.Error
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error.Message == "" || !slices.Contains(codes, e.Error.Code) {
		t.Fatalf("%s %s: %d %q is not a documented JSON error (%v)", r.Method, r.URL, w.Code, w.Body, err)
	}
	var req wire.AcquireRequest
	if json.Unmarshal(body, &req) == nil && len(req.Owner) >= minSecret && strings.Contains(w.Body.String(), req.Owner) {
		t.Fatalf("the refusal %q shows the owner id", w.Body)
	}
}

// checkPage checks a dashboard page: a documented status, its CSP, and
// nothing of the query echoed as markup.
func checkPage(t *testing.T, w *httptest.ResponseRecorder, r *http.Request) {
	t.Helper()
	if !slices.Contains([]int{200, 400, 403, 501, 503}, w.Code) || r.URL.Path != "/" {
		t.Fatalf("%s %s: page with status %d", r.Method, r.URL, w.Code)
	}
	if !strings.Contains(w.Header().Get("Content-Security-Policy"), "default-src 'none'") {
		t.Fatalf("%s %s: a page without its CSP", r.Method, r.URL)
	}
	if p := r.URL.Query().Get("prefix"); strings.ContainsAny(p, "<>&") && strings.Contains(w.Body.String(), p) {
		t.Fatalf("%s %s: the page shows the prefix %q unescaped", r.Method, r.URL, p)
	}
}

// FuzzDecode feeds any body to the request decoder for each request type:
// a body it accepts is valid JSON that decodes to the same value after a
// round trip; one it refuses gets a 400 or 413 with a message.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"key":"k","owner":"o-owner-0123456789","ttl_ms":1000}`))
	f.Add([]byte(`{"key":"k","owner":"o-owner-0123456789","token":"7","handle":"h"}`))
	f.Add([]byte(`{"key":"k"} {"key":"k"}`))
	f.Add([]byte(`{"token":7}`))
	f.Add([]byte(`{"ttl_ms":1e400}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, v := range []any{&wire.AcquireRequest{}, &wire.GrantRequest{}, &wire.BreakRequest{}} {
			err := decodeFrom(http.MaxBytesReader(httptest.NewRecorder(), ioNop(body), MaxBodyBytes), v)
			var re *requestError
			switch {
			case err == nil:
				if !json.Valid(bytes.TrimSpace(body)) {
					t.Fatalf("accepted %q, which is not one JSON value", body)
				}
				again := reflect.New(reflect.TypeOf(v).Elem()).Interface()
				b, _ := json.Marshal(v)
				if err := decodeFrom(bytes.NewReader(b), again); err != nil || !reflect.DeepEqual(v, again) {
					t.Fatalf("%T %q: round trip gave %+v (%v)", v, body, again, err)
				}
			case !errors.As(err, &re) || re.msg == "" || (re.status != 400 && re.status != 413):
				t.Fatalf("%T %q: refused with %#v", v, body, err)
			}
		}
	})
}

func ioNop(b []byte) *nopCloser { return &nopCloser{bytes.NewReader(b)} }

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// FuzzTokens reads any token file: no panic; an accepted file's rules each
// grant a known verb on some prefix, to a token of at least 16 bytes not
// starting with cert: or to a certificate's non-empty common name that a
// cert: field of the file names; every rule is found by its credential; a
// refusal never shows a token of the file.
func FuzzTokens(f *testing.F) {
	f.Add("jobs 0123456789abcdef0123 acquire,read jobs/ ci/\n# comment\n\nops fedcba9876543210fedc * *\n")
	f.Add("bot cert:deploy-bot acquire,renew deploy/\nci cert:build%20bot * *\n")
	f.Add("a cert: * *\n")
	f.Add("a cert:x * *\nb cert:x read *\n")
	f.Add("a cert:%zz * *\n")
	f.Add("a 0123456789abcdef0123 fly *\n")
	f.Add("a 0123456789abcdef0123 * *\na 0123456789abcdef0124 * *\n")
	f.Add("a short * *\n")
	f.Fuzz(func(t *testing.T, text string) {
		m, err := parseTokens(strings.NewReader(text))
		if err != nil {
			// A token that is also written in another field (a name, a
			// verb: the message may show those, quoted with %q, whose
			// escapes can spell it: a NUL and 14 zeros quote as \x00 and
			// 14 zeros, which holds "0000000000000000") is not looked for.
			var others, tokens []string
			for _, line := range strings.Split(text, "\n") {
				if f := strings.Fields(line); len(f) >= 2 {
					others, tokens = append(others, f[0]), append(tokens, f[1])
					others = append(others, f[2:]...)
				}
			}
			for _, tok := range tokens {
				named := slices.ContainsFunc(others, func(n string) bool {
					return strings.Contains(n, tok) || strings.Contains(fmt.Sprintf("%q", n), tok)
				})
				if len(tok) >= minSecret && !named && strings.Contains(err.Error(), tok) {
					t.Fatalf("the refusal %q shows the token %q", err, tok)
				}
			}
			return
		}
		checkRuleSet(t, text, m)
	})
}

// checkRuleSet checks the rules m that parseTokens read from text.
func checkRuleSet(t *testing.T, text string, m *ruleSet) {
	t.Helper()
	tokens := &Tokens{}
	tokens.rules.Store(m)
	rules := slices.Collect(maps.Values(m.tokens))
	for cn, r := range m.certs {
		if cn == "" || !strings.Contains(text, "cert:") {
			t.Fatalf("certificate rule %+v for the common name %q", r, cn)
		}
		if got, ok := tokens.lookupCert(cn); !ok || got.name != r.name {
			t.Fatalf("the rule of the certificate %q is not found", cn)
		}
		rules = append(rules, r)
	}
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) >= 4 && !strings.HasPrefix(f[0], "#") && !strings.HasPrefix(f[1], certPrefix) {
			if got, ok := tokens.lookup(f[1]); !ok || got.name != f[0] {
				t.Fatalf("the rule of %s's token is not found: %+v", f[0], got)
			}
		}
	}
	for _, r := range rules {
		if r.name == "" || len(r.verbs) == 0 || len(r.prefixes) == 0 {
			t.Fatalf("rule %+v grants nothing or to no one", r)
		}
		for _, v := range r.verbs {
			if !slices.Contains(verbs, v) {
				t.Fatalf("rule %+v has the verb %q", r, v)
			}
		}
	}
}
