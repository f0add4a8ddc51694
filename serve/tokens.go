package serve

import (
	"bufio"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync/atomic"
)

// The verbs a token's rules grant. VerbAdmin lets a caller break a key's
// lease (POST /v1/admin/break, the dashboard's break button).
const (
	VerbAcquire = "acquire"
	VerbRenew   = "renew"
	VerbRelease = "release"
	VerbRead    = "read" // holder, list, info
	VerbWatch   = "watch"
	VerbAdmin   = "admin"
)

var verbs = []string{VerbAcquire, VerbRenew, VerbRelease, VerbRead, VerbWatch, VerbAdmin}

// Tokens holds the credentials a server accepts, bearer tokens and
// client certificates, and what each may do: deny by default, so a client
// may do only what a rule of its own grants. It is safe for concurrent
// use; Load replaces the rules at once.
//
// The file's lines are
//
//	NAME TOKEN VERBS PREFIX...
//	NAME cert:COMMON-NAME VERBS PREFIX...
//
// NAME names the client in logs (the token never appears in one); TOKEN is
// the secret (at least 16 bytes, not starting with "cert:"); VERBS is a
// comma-separated list of acquire, renew, release, read, watch and admin,
// or * for all; each PREFIX is a key prefix the verbs apply to, * for
// every key. Blank lines and lines starting with # are skipped.
//
// A line whose second field is cert:COMMON-NAME is the rule of a client
// certificate (mTLS) whose subject common name is COMMON-NAME, as
// Kubernetes names a certificate's user; a name with spaces or other bytes
// that would split the line is written percent-encoded (cert:build%20bot).
// It applies to a certificate the TLS handshake verified against the
// server's client CAs (`leasehold serve --tls-client-ca`); a server that
// verifies none never matches it. A request with a bearer token is judged
// by the token alone; one with a verified certificate and no token by
// the certificate's rule, and a certificate without one may do nothing
// (403). Example:
//
//	# name    token or certificate               verbs                         prefixes
//	batch     8c1f0b6e2f0d4a7c9b3e5d1a0f2c4e6b   acquire,renew,release,read    jobs/
//	ops       0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a   *                             *
//	deploy    cert:deploy-bot                    acquire,renew,release,read    deploy/
type Tokens struct {
	rules atomic.Pointer[ruleSet]
}

// ruleSet is a token file's rules: by the SHA-256 sum of a bearer token,
// and by the common name of a client certificate.
type ruleSet struct {
	tokens map[[32]byte]rule
	certs  map[string]rule
}

// certPrefix starts the second field of a client certificate's rule.
const certPrefix = "cert:"

// rule is what one token may do.
type rule struct {
	name     string
	verbs    []string
	prefixes []string // "" is every key
}

// minToken is the shortest token accepted.
const minToken = 16

// LoadTokens reads the token file at path.
func LoadTokens(path string) (*Tokens, error) {
	t := &Tokens{}
	return t, t.Load(path)
}

// Load replaces the rules by those of the file at path. On error the rules
// stay as they were, and the error names the line.
func (t *Tokens) Load(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	m, err := parseTokens(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	t.rules.Store(m)
	return nil
}

// errTokenFile is the error of a malformed token file.
var errTokenFile = errors.New("malformed token file")

// parseTokens reads a token file. Its errors name the line, never the
// token.
func parseTokens(r io.Reader) (*ruleSet, error) {
	m := &ruleSet{tokens: make(map[[32]byte]rule), certs: make(map[string]rule)}
	names := make(map[string]bool)
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 {
			return nil, fmt.Errorf("%w: line %d: want NAME TOKEN VERBS PREFIX... (or NAME cert:COMMON-NAME VERBS PREFIX...), found %d fields", errTokenFile, n, len(f))
		}
		r, err := parseRule(f[0], f[2], f[3:])
		if err == nil && names[f[0]] {
			err = fmt.Errorf("the name %s is given twice", f[0])
		}
		if err == nil {
			err = m.add(f[1], r)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: line %d (%s): %v", errTokenFile, n, f[0], err)
		}
		names[f[0]] = true
	}
	return m, sc.Err()
}

// add adds r, the rule of the line's second field cred: a bearer token,
// or cert:COMMON-NAME. Its errors never show a token.
func (m *ruleSet) add(cred string, r rule) error {
	if cn, ok := strings.CutPrefix(cred, certPrefix); ok {
		name, err := url.PathUnescape(cn)
		switch {
		case err != nil:
			return fmt.Errorf("the certificate's common name %q is not percent-encoded right: %v", cn, err)
		case name == "":
			return errors.New("cert: names no common name")
		case m.certs[name].name != "":
			return fmt.Errorf("the same certificate common name as %s", m.certs[name].name)
		}
		m.certs[name] = r
		return nil
	}
	sum := sha256.Sum256([]byte(cred))
	switch {
	case len(cred) < minToken:
		return fmt.Errorf("the token is shorter than %d bytes", minToken)
	case m.tokens[sum].name != "":
		return fmt.Errorf("the same token as %s", m.tokens[sum].name)
	}
	m.tokens[sum] = r
	return nil
}

func parseRule(name, verbList string, prefixes []string) (rule, error) {
	r := rule{name: name}
	for _, v := range strings.Split(verbList, ",") {
		switch {
		case v == "*":
			r.verbs = append(r.verbs, verbs...)
		case slices.Contains(verbs, v):
			r.verbs = append(r.verbs, v)
		default:
			return rule{}, fmt.Errorf("unknown verb %q; the verbs are %s, or *", v, strings.Join(verbs, ", "))
		}
	}
	for _, p := range prefixes {
		if p == "*" {
			p = ""
		}
		r.prefixes = append(r.prefixes, p)
	}
	return r, nil
}

// lookup returns the rule of token.
func (t *Tokens) lookup(token string) (rule, bool) {
	m := t.rules.Load()
	if m == nil || token == "" {
		return rule{}, false
	}
	r, ok := m.tokens[sha256.Sum256([]byte(token))]
	return r, ok
}

// lookupCert returns the rule of a verified client certificate whose
// subject common name is cn.
func (t *Tokens) lookupCert(cn string) (rule, bool) {
	m := t.rules.Load()
	if m == nil || cn == "" {
		return rule{}, false
	}
	r, ok := m.certs[cn]
	return r, ok
}

// certRules reports whether any rule names a client certificate.
func (t *Tokens) certRules() bool {
	m := t.rules.Load()
	return m != nil && len(m.certs) > 0
}

// allows reports whether r grants verb on key. For a list, key is the
// list's prefix, which must lie within one of the rule's prefixes.
func (r rule) allows(verb, key string) bool {
	if !slices.Contains(r.verbs, verb) {
		return false
	}
	for _, p := range r.prefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}
