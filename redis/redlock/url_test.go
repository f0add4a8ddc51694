package redlock

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// escapeAll percent-encodes every byte but letters and digits.
func escapeAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// format writes u back as a redlock URL.
func format(u URL) string {
	s := "redlock://"
	if u.Username != "" || u.Password != "" {
		s += escapeAll(u.Username) + ":" + escapeAll(u.Password) + "@"
	}
	s += strings.Join(u.Addrs, ",") + "/" + strconv.Itoa(u.DB)
	if u.Prefix != "" {
		s += "?prefix=" + url.QueryEscape(u.Prefix)
	}
	return s
}

// FuzzParseURL: a redlock URL is refused, or accepted with masters that
// are host:port with a port in range and a database that is not negative,
// and written back it parses to the same URL.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"redlock://h1:1,h2:2,h3:3", "redlock://u:p%40ss@h:6379/2?prefix=app:", "redlock://:pw@[::1]:6379",
		"redlock://h:0", "redlock://h:99999", "redlock://h:1/-1", "redlock://h:1?db=2", "redis://h:1", "redlock://h:1?%zz",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := ParseURL(raw)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("ParseURL(%q): empty error", raw)
			}
			return
		}
		if len(u.Addrs) == 0 || u.DB < 0 {
			t.Fatalf("ParseURL(%q) = %+v", raw, u)
		}
		for _, a := range u.Addrs {
			host, port, err := net.SplitHostPort(a)
			n, perr := strconv.Atoi(port)
			if err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
				t.Fatalf("ParseURL(%q): master %q", raw, a)
			}
		}
		back := format(u)
		u2, err := ParseURL(back)
		if err != nil || u2.Username != u.Username || u2.Password != u.Password || u2.DB != u.DB || u2.Prefix != u.Prefix || !slices.Equal(u2.Addrs, u.Addrs) {
			t.Fatalf("ParseURL(%q) = %+v; written back as %q it parses to %+v, %v", raw, u, back, u2, err)
		}
	})
}
