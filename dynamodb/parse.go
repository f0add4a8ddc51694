package dynamodb

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// tableChars are the characters of a DynamoDB table name.
const tableChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"

// urlConfig is what a dynamodb:// URL says.
type urlConfig struct {
	table, endpoint, region string
	access, secret, session string
	skew                    time.Duration
}

var urlParams = []string{"endpoint", "region", "access_key", "secret_key", "session_token", "max_skew"}

// parseURL reads dynamodb://TABLE?endpoint=URL&region=R&access_key=K&
// secret_key=S&session_token=T&max_skew=D (see OpenURL). Its errors name
// the store.
func parseURL(raw string) (urlConfig, error) {
	var c urlConfig
	bad := func(format string, a ...any) (urlConfig, error) {
		return urlConfig{}, fmt.Errorf("leasehold: %s store: URL: "+format, append([]any{Name}, a...)...)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return bad("%v", err)
	}
	c.table = u.Host
	if u.Scheme != Name || u.User != nil || u.Opaque != "" || (u.Path != "" && u.Path != "/") || u.Fragment != "" {
		return bad("%q: want dynamodb://TABLE[?endpoint=URL&region=R...]", u.Redacted())
	}
	if len(c.table) < 3 || len(c.table) > 255 || strings.Trim(c.table, tableChars) != "" {
		return bad("table %q: a table name is 3 to 255 of a-z, A-Z, 0-9, '_', '-' and '.'", clip(c.table))
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return bad("%v", err)
	}
	for k, v := range q {
		if !slices.Contains(urlParams, k) {
			return bad("unknown parameter %q (want %s)", clip(k), strings.Join(urlParams, ", "))
		}
		if len(v) > 1 {
			return bad("parameter %q given %d times", k, len(v))
		}
	}
	c.endpoint, c.region = q.Get("endpoint"), q.Get("region")
	if c.endpoint != "" {
		if e, err := url.Parse(c.endpoint); err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" {
			return bad("endpoint %q: want http://HOST[:PORT] or https://...", clip(c.endpoint))
		}
	}
	c.access, c.secret, c.session = q.Get("access_key"), q.Get("secret_key"), q.Get("session_token")
	if (c.access == "") != (c.secret == "") || (c.session != "" && c.access == "") {
		return bad("access_key and secret_key go together (session_token with them)")
	}
	if v := q.Get("max_skew"); q.Has("max_skew") {
		if c.skew, err = time.ParseDuration(v); err != nil || c.skew <= 0 || c.skew > MaxSkewLimit {
			return bad("max_skew=%s: want a duration above 0 and at most %s (say 500ms)", clip(v), MaxSkewLimit)
		}
	}
	return c, nil
}
