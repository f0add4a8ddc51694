package serve

import (
	"crypto/rand"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/wire"
)

// The dashboard (GET /) is a server-rendered page, with its CSS and script
// inline under a Content-Security-Policy that allows nothing else; its
// table is kept live by the server-sent events of GET /dashboard/events.
//
// Who views it: with Options.Tokens, the viewer gives their token once, in
// the page's form (POST /dashboard/login), and the server sets it in a
// cookie that is HttpOnly (no script of the page, so no injected one,
// can read it), SameSite=Strict (no other site's page sends it), Secure
// over TLS, and lasts the browser session; the server checks it on each
// request like a bearer token, so revoking the token (SIGHUP) ends the
// session, and the server keeps no session state (any replica serves the
// page). The cookie is accepted on the dashboard's paths only, never by
// the /v1/ API, and its break (POST /dashboard/break) also needs a header
// that a cross-origin page cannot send without the server's consent, and
// a same-origin Origin. A bearer header works too (for scripts and tests).
// Without tokens the page shows every lease, read-only.
//
// The page needs the read verb on its prefix (and watch for live updates);
// a lease gets a break button when the viewer has admin on its key.

//go:embed dashboard.html
var dashboardHTML string

// cookieName is the dashboard's session cookie: the viewer's token.
const cookieName = "leasehold_token"

// maxRows bounds the leases the dashboard shows at once.
const maxRows = 500

// pages are the dashboard's endpoints. They authenticate by themselves
// (see viewer), so ServeHTTP passes them through.
var pages = []route{
	{"GET", "/{$}", (*Server).dashboard},
	{"GET", "/dashboard/events", (*Server).dashboardEvents},
	{"POST", "/dashboard/login", (*Server).login},
	{"POST", "/dashboard/logout", (*Server).logout},
	{"POST", "/dashboard/break", (*Server).dashboardBreak},
}

// addPages routes the dashboard's endpoints.
func (s *Server) addPages() {
	s.tmpl = template.Must(template.New("dashboard").Parse(dashboardHTML))
	for _, p := range pages {
		s.mux.HandleFunc(p.method+" "+p.path, p.handler(s))
	}
}

// isPage reports whether the mux pattern is one of the dashboard's.
func isPage(pattern string) bool {
	for _, p := range pages {
		if pattern == p.method+" "+p.path {
			return true
		}
	}
	return false
}

// viewer returns the rule of the dashboard's viewer, from the bearer
// header, else the cookie; without Options.Tokens, a rule that reads and
// watches every key and administers none. ok is false when the server has
// tokens and the request carries none it accepts.
func (s *Server) viewer(r *http.Request) (rl rule, ok bool) {
	if s.opts.Tokens == nil {
		return rule{verbs: []string{VerbRead, VerbWatch}, prefixes: []string{""}}, true
	}
	token, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !bearer {
		c, err := r.Cookie(cookieName)
		if err != nil {
			return rule{}, false
		}
		b, err := base64.RawURLEncoding.DecodeString(c.Value)
		if err != nil {
			return rule{}, false
		}
		token = string(b)
	}
	return s.opts.Tokens.lookup(strings.TrimSpace(token))
}

// pageData is what dashboard.html renders.
type pageData struct {
	Nonce   string
	Store   string
	Viewer  string // the viewer's name; "" without tokens
	Login   bool   // show the token form instead of the leases
	Message string // why the page shows no leases, or the login's refusal
	Prefix  string
	Rows    []dashRow
	More    int  // leases beyond maxRows
	Live    bool // the viewer may watch the prefix
}

// render writes the page with a fresh nonce and its security headers.
func (s *Server) render(w http.ResponseWriter, status int, d pageData) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	d.Nonce = hex.EncodeToString(b[:])
	d.Store = s.info.Name
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'nonce-"+d.Nonce+"'; style-src 'nonce-"+d.Nonce+
		"'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	w.WriteHeader(status)
	_ = s.tmpl.Execute(w, d)
}

func (s *Server) dashboard() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rl, ok := s.viewer(r)
		if !ok {
			s.render(w, http.StatusOK, pageData{Login: true})
			return
		}
		d := pageData{Viewer: rl.name, Prefix: r.URL.Query().Get("prefix")}
		if !r.URL.Query().Has("prefix") && !rl.allows(VerbRead, "") && len(rl.prefixes) > 0 {
			d.Prefix = rl.prefixes[0] // the viewer's own keys, not a 403
		}
		if !rl.allows(VerbRead, d.Prefix) {
			d.Message = rl.name + " may not read the keys under " + quote(d.Prefix)
			s.render(w, http.StatusForbidden, d)
			return
		}
		rows, more, err := s.snapshot(r, rl, d.Prefix)
		if err != nil {
			status, body := failure(err)
			d.Message = body.Message
			s.render(w, status, d)
			return
		}
		d.Rows, d.More, d.Live = rows, more, rl.allows(VerbWatch, d.Prefix)
		s.render(w, http.StatusOK, d)
	}
}

func quote(prefix string) string {
	if prefix == "" {
		return "every key"
	}
	b, _ := json.Marshal(prefix)
	return string(b)
}

// sameOrigin reports whether a state-changing request comes from the
// dashboard's own pages: the browser's Sec-Fetch-Site says same-origin
// (or that the person typed it), or, from a browser that does not send it,
// the Origin (if any) is this server's.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin" || site == "none"
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host == r.Host
}

// login sets the cookie of a token the server accepts, and shows the
// dashboard; a refused one shows the form again.
func (s *Server) login() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !sameOrigin(r) {
			s.render(w, http.StatusForbidden, pageData{Login: true, Message: "a sign-in from another site is refused"})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		token := strings.TrimSpace(r.PostFormValue("token"))
		if s.opts.Tokens == nil {
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		if _, ok := s.opts.Tokens.lookup(token); !ok {
			s.render(w, http.StatusUnauthorized, pageData{Login: true, Message: "that is not a token this server accepts (revoked, or mistyped)"})
			return
		}
		http.SetCookie(w, &http.Cookie{Name: cookieName, Value: base64.RawURLEncoding.EncodeToString([]byte(token)),
			Path: "/", HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
		http.Redirect(w, r, "/", http.StatusSeeOther)
	}
}

func (s *Server) logout() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: cookieName, Path: "/", MaxAge: -1, HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
		http.Redirect(w, r, "/", http.StatusSeeOther)
	}
}

// dashboardBreak is the break button: POST /v1/admin/break's body and
// answers, as the dashboard's viewer.
func (s *Server) dashboardBreak() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !sameOrigin(r) || r.Header.Get("X-Leasehold-Dashboard") != "1" {
			writeError(w, http.StatusForbidden, wire.CodeForbidden, "the dashboard's break is taken from its own page only (X-Leasehold-Dashboard: 1, same origin)")
			return
		}
		rl, ok := s.viewer(r)
		if !ok {
			writeError(w, http.StatusUnauthorized, wire.CodeUnauthorized, "sign in to the dashboard with a token first")
			return
		}
		var body wire.BreakRequest
		if err := s.decode(w, r, &body); err != nil {
			writeFailure(w, err, "")
			return
		}
		h, err := s.breakAs(r.WithContext(withRule(r, rl)), body)
		if err != nil {
			writeBreakFailure(w, err)
			return
		}
		writeJSON(w, http.StatusOK, wire.FromHolder(h))
	}
}

// snapshot lists the leases under prefix as rl sees them, sorted by key,
// at most maxRows of them (more says how many are left out).
func (s *Server) snapshot(r *http.Request, rl rule, prefix string) (rows []dashRow, more int, err error) {
	l, ok := s.store.(leasehold.Lister)
	if !ok {
		return nil, 0, &requestError{http.StatusNotImplemented, wire.CodeNotImplemented, "the " + s.info.Name + " store cannot list holders, so the dashboard has nothing to show"}
	}
	if prefix != "" {
		if err := leasehold.ValidateKey(prefix); err != nil {
			return nil, 0, err
		}
	}
	hs, err := l.List(r.Context(), prefix)
	if err != nil {
		return nil, 0, err
	}
	return s.rows(rl, hs)
}
