package serve

import (
	"bufio"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
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

// Tokens holds the bearer tokens a server accepts and what each may do:
// deny by default, so a token may do only what a rule of its own grants.
// It is safe for concurrent use; Load replaces the rules at once.
//
// The file's lines are
//
//	NAME TOKEN VERBS PREFIX...
//
// NAME names the client in logs (the token never appears in one); TOKEN is
// the secret (at least 16 bytes); VERBS is a comma-separated list of
// acquire, renew, release, read, watch and admin, or * for all; each
// PREFIX is a key prefix the verbs apply to, * for every key. Blank lines
// and lines starting with # are skipped. Example:
//
//	# name    token                              verbs                         prefixes
//	batch     8c1f0b6e2f0d4a7c9b3e5d1a0f2c4e6b   acquire,renew,release,read    jobs/
//	ops       0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a   *                             *
type Tokens struct {
	rules atomic.Pointer[map[[32]byte]rule]
}

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
	t.rules.Store(&m)
	return nil
}

// errTokenFile is the error of a malformed token file.
var errTokenFile = errors.New("malformed token file")

// parseTokens reads a token file. Its errors name the line, never the
// token.
func parseTokens(r io.Reader) (map[[32]byte]rule, error) {
	m := make(map[[32]byte]rule)
	names := make(map[string]bool)
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 {
			return nil, fmt.Errorf("%w: line %d: want NAME TOKEN VERBS PREFIX..., found %d fields", errTokenFile, n, len(f))
		}
		r, err := parseRule(f[0], f[2], f[3:])
		if err != nil {
			return nil, fmt.Errorf("%w: line %d (%s): %v", errTokenFile, n, f[0], err)
		}
		sum := sha256.Sum256([]byte(f[1]))
		switch {
		case len(f[1]) < minToken:
			return nil, fmt.Errorf("%w: line %d (%s): the token is shorter than %d bytes", errTokenFile, n, f[0], minToken)
		case names[f[0]]:
			return nil, fmt.Errorf("%w: line %d: the name %s is given twice", errTokenFile, n, f[0])
		case m[sum].name != "":
			return nil, fmt.Errorf("%w: line %d (%s): the same token as %s", errTokenFile, n, f[0], m[sum].name)
		}
		names[f[0]] = true
		m[sum] = r
	}
	return m, sc.Err()
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
	r, ok := (*m)[sha256.Sum256([]byte(token))]
	return r, ok
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
