package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold/internal/wire"
	"github.com/leasehold-go/leasehold/memory"
)

// page sends a dashboard request, with the session cookie of token if
// token is not "".
func page(t *testing.T, s *Server, token, method, target, body string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequestWithContext(context.Background(), method, target, strings.NewReader(body))
	if token != "" {
		r.AddCookie(sessionCookie(t, s, token))
	}
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

// signIn posts the dashboard's sign-in form with token.
func signIn(s *Server, token string) *httptest.ResponseRecorder {
	r := httptest.NewRequestWithContext(context.Background(), "POST", "/dashboard/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

// sessionCookie signs in with token and returns the cookie it sets.
func sessionCookie(t *testing.T, s *Server, token string) *http.Cookie {
	t.Helper()
	w := signIn(s, token)
	cs := w.Result().Cookies()
	if w.Code != http.StatusSeeOther || len(cs) != 1 {
		t.Fatalf("sign in: %d %v, want 303 with a cookie", w.Code, cs)
	}
	c := cs[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || strings.Contains(c.Raw, token) {
		t.Errorf("session cookie %q: want HttpOnly, SameSite=Strict, Path=/, the token not in clear", c.Raw)
	}
	return c
}

// TestDashboardShowsLeases: without tokens the page shows every held
// lease with its label, token, time left, waiters and contention, read-only,
// under a CSP that lets only its own nonce'd script run; hostile keys and
// labels are escaped, never markup.
func TestDashboardShowsLeases(t *testing.T) {
	s, _ := newServer(t)
	const hostile = `<script>alert(1)</script>`
	w := do(t, s, "POST", "/v1/acquire", jsonOf(t, wire.AcquireRequest{Key: "jobs/" + hostile, Owner: owner, Label: hostile + `"'&`, TTLMs: 60000}))
	if w.Code != http.StatusOK {
		t.Fatalf("acquire: %d %s", w.Code, w.Body)
	}
	acquire(t, s, "jobs/nightly", owner)
	do(t, s, "POST", "/v1/acquire", jsonOf(t, wire.AcquireRequest{Key: "jobs/nightly", Owner: "other-owner-0123456789", TTLMs: 1000})) // refused: contention 1
	w = do(t, s, "GET", "/", "")
	html := w.Body.String()
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET /: %d %s", w.Code, w.Header().Get("Content-Type"))
	}
	for _, want := range []string{`<td class="key">jobs/nightly</td>`, `<td class="token">1</td>`, `<td class="num contention">1</td>`,
		`&lt;script&gt;alert(1)&lt;/script&gt;`, "No tokens: read-only"} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q:\n%s", want, html)
		}
	}
	if strings.Contains(html, hostile) || strings.Contains(html, `class="break"`) || strings.Contains(html, owner) {
		t.Errorf("the page shows a hostile label as markup, a break button without tokens, or an owner id:\n%s", html)
	}
	csp := w.Header().Get("Content-Security-Policy")
	nonce := regexp.MustCompile(`script-src 'nonce-([^']+)'`).FindStringSubmatch(csp)
	if nonce == nil || !strings.Contains(csp, "default-src 'none'") {
		t.Fatalf("CSP %q, want default-src 'none' and a script nonce", csp)
	}
	scripts := regexp.MustCompile(`<script[^>]*>`).FindAllString(html, -1)
	if len(scripts) != 1 || scripts[0] != `<script nonce="`+nonce[1]+`">` {
		t.Errorf("script tags %q, want only the page's own, with the CSP's nonce", scripts)
	}
	if w := do(t, s, "GET", "/?prefix=billing/", ""); !strings.Contains(w.Body.String(), "No leases held under this prefix") {
		t.Errorf("another prefix shows leases: %s", w.Body)
	}
}

// nightlyServer is adminServer over a memory store where jobs made
// jobs/nightly (token 1, label host-1).
func nightlyServer(t *testing.T) (*Server, *memory.Store, logFile) {
	t.Helper()
	st := memory.New(nil)
	t.Cleanup(func() { _ = st.Close() })
	s, log := adminServer(t, st)
	acquireAs(t, s, jobsToken, "jobs/nightly", "host-1")
	return s, st, log
}

// TestDashboardTokens: with tokens the page asks for one; a refused
// token shows the form again; the session shows the viewer's keys, with
// a break button only where the viewer has admin; a prefix outside the
// viewer's rules is 403; the cookie is no credential for the /v1/ API.
func TestDashboardTokens(t *testing.T) {
	s, _, _ := nightlyServer(t)
	if w := page(t, s, "", "GET", "/", ""); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `name="token"`) || strings.Contains(w.Body.String(), "jobs/nightly") {
		t.Errorf("GET / without a session: %d, want the token form and no lease:\n%s", w.Code, w.Body)
	}
	if w := signIn(s, "wrong-token-0123456789"); w.Code != http.StatusUnauthorized || len(w.Result().Cookies()) != 0 || !strings.Contains(w.Body.String(), "not a token this server accepts") {
		t.Errorf("sign in with a wrong token: %d %v", w.Code, w.Result().Cookies())
	}
	for _, tc := range []struct {
		token, target string
		status        int
		breakButton   bool
		says          string
	}{
		{readToken, "/", http.StatusOK, false, `<td class="key">jobs/nightly</td>`},
		{adminToken, "/?prefix=jobs/", http.StatusOK, true, `<td class="key">jobs/nightly</td>`},
		{readToken, "/?prefix=billing/", http.StatusForbidden, false, `reader may not read the keys under &#34;billing/&#34;`},
	} {
		w := page(t, s, tc.token, "GET", tc.target, "")
		html := w.Body.String()
		if w.Code != tc.status || strings.Contains(html, `class="break"`) != tc.breakButton || !strings.Contains(html, tc.says) {
			t.Errorf("GET %s: %d, break button %v, want %d, %v, saying %q:\n%s", tc.target, w.Code, !tc.breakButton, tc.status, tc.breakButton, tc.says, html)
		}
	}
	if w := page(t, s, adminToken, "GET", "/v1/holder?key=jobs/nightly", ""); w.Code != http.StatusUnauthorized {
		t.Errorf("the API with the dashboard's cookie: %d, want 401", w.Code)
	}
}

// TestDashboardBreak: the break button's endpoint breaks as the session's
// viewer, from the dashboard's own page only.
func TestDashboardBreak(t *testing.T) {
	s, st, log := nightlyServer(t)
	body := `{"key":"jobs/nightly","token":"1"}`
	tests := []struct {
		name, token string
		header      []string
		status      int
	}{
		{"no header", adminToken, nil, http.StatusForbidden},
		{"other origin", adminToken, []string{"X-Leasehold-Dashboard", "1", "Origin", "https://evil.example"}, http.StatusForbidden},
		{"cross-site fetch", adminToken, []string{"X-Leasehold-Dashboard", "1", "Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"no session", "", []string{"X-Leasehold-Dashboard", "1"}, http.StatusUnauthorized},
		{"read-only", readToken, []string{"X-Leasehold-Dashboard", "1"}, http.StatusForbidden},
		{"admin", adminToken, []string{"X-Leasehold-Dashboard", "1", "Origin", "http://example.com", "Sec-Fetch-Site", "same-origin"}, http.StatusOK},
	}
	for _, tc := range tests {
		w := page(t, s, tc.token, "POST", "/dashboard/break", body, tc.header...)
		if w.Code != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, w.Code, w.Body, tc.status)
		}
	}
	if _, err := st.Holder(context.Background(), "jobs/nightly"); err == nil {
		t.Error("the lease is held after the admin's break")
	}
	if !strings.Contains(log.String(), "by=admin key=jobs/nightly token=1 holder=host-1") {
		t.Errorf("audit log %q", log)
	}
}

// TestDashboardEvents: the stream sends the leases under its prefix at
// once, then again when a lease is taken, waited for (waiters) and
// released through the server, without waiting for its poll; it needs the
// watch verb on the prefix.
func TestDashboardEvents(t *testing.T) {
	s, _ := newServer(t)
	hs := httptest.NewServer(s)
	defer hs.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", hs.URL+"/dashboard/events?prefix=jobs/", nil)
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	lines := bufio.NewScanner(resp.Body)
	// until reads events until one's data satisfies ok.
	until := func(what string, ok func(dashEvent) bool) {
		t.Helper()
		for lines.Scan() {
			data, found := strings.CutPrefix(lines.Text(), "data: ")
			var ev dashEvent
			if found && json.Unmarshal([]byte(data), &ev) == nil && ok(ev) {
				return
			}
		}
		t.Fatalf("the stream ended before %s (%v)", what, lines.Err())
	}
	until("the first snapshot", func(ev dashEvent) bool { return len(ev.Leases) == 0 })
	g := acquire(t, s, "jobs/a", owner)
	acquire(t, s, "billing/b", owner)
	until("jobs/a shows", func(ev dashEvent) bool {
		return len(ev.Leases) == 1 && ev.Leases[0].Key == "jobs/a" && ev.Leases[0].Token == g.Token
	})
	waited := make(chan int, 1)
	go func() {
		w := do(t, s, "POST", "/v1/acquire", jsonOf(t, wire.AcquireRequest{Key: "jobs/a", Owner: "waiter-owner-0123456789", TTLMs: 60000, WaitMs: 30000}))
		waited <- w.Code
	}()
	until("a waiter shows", func(ev dashEvent) bool { return len(ev.Leases) == 1 && ev.Leases[0].Waiters == 1 })
	rel := wire.GrantRequest{Key: g.Key, Owner: g.Owner, Token: g.Token, Handle: g.Handle}
	if w := do(t, s, "POST", "/v1/release", jsonOf(t, rel)); w.Code != http.StatusNoContent {
		t.Fatalf("release: %d %s", w.Code, w.Body)
	}
	if code := <-waited; code != http.StatusOK {
		t.Fatalf("the waiting acquire: %d", code)
	}
	until("the waiter's grant shows", func(ev dashEvent) bool {
		return len(ev.Leases) == 1 && ev.Leases[0].Token == g.Token+1 && ev.Leases[0].Waiters == 0
	})
}

// TestDashboardEventsRefused: the stream needs a session, and the read and
// watch verbs on its prefix.
func TestDashboardEventsRefused(t *testing.T) {
	st := memory.New(nil)
	defer st.Close()
	s, _ := adminServer(t, st)
	for _, tc := range []struct {
		token, target string
		status        int
	}{
		{"", "/dashboard/events?prefix=jobs/", http.StatusUnauthorized},
		{readToken, "/dashboard/events?prefix=billing/", http.StatusForbidden},
		{readToken, "/dashboard/events", http.StatusForbidden},
		{readToken, "/dashboard/events?prefix=jobs/&key=x", http.StatusBadRequest},
	} {
		if w := page(t, s, tc.token, "GET", tc.target, ""); w.Code != tc.status {
			t.Errorf("GET %s: %d %s, want %d", tc.target, w.Code, w.Body, tc.status)
		}
	}
}

// TestSameOrigin: which requests the dashboard's sign-in and break take as
// its own page's. A form posted by Chromium from the page carries
// "Origin: null" (the page's referrer policy) with Sec-Fetch-Site:
// same-origin; the browser test found that refused.
func TestSameOrigin(t *testing.T) {
	tests := []struct {
		name, site, origin string
		want               bool
	}{
		{"no headers (not a browser)", "", "", true},
		{"same-origin fetch", "same-origin", "http://example.com", true},
		{"same-origin form, Origin null", "same-origin", "null", true},
		{"typed by the person", "none", "", true},
		{"cross-site", "cross-site", "https://evil.example", false},
		{"same-site, other origin", "same-site", "http://sub.example.com", false},
		{"old browser, other origin", "", "https://evil.example", false},
		{"old browser, same origin", "", "http://example.com", true},
		{"old browser, Origin null", "", "null", false},
	}
	for _, tc := range tests {
		r := httptest.NewRequestWithContext(context.Background(), "POST", "/dashboard/login", nil)
		if tc.site != "" {
			r.Header.Set("Sec-Fetch-Site", tc.site)
		}
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		if got := sameOrigin(r); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
