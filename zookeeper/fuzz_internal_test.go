package zookeeper

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// FuzzNodeName: a child name parseNode accepts is exactly the one
// ZooKeeper makes for its id and sequence (formatNode); a refusal says
// which part is wrong.
func FuzzNodeName(f *testing.F) {
	for _, s := range []string{testID + "-0000000000", testID + "-2147483647", testID + "-2147483648",
		testID + "-00000000000000000000", testID + "-+000000001", testID + "--000000001", "not-ours", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		n, err := parseNode(name)
		if err != nil {
			if msg := err.Error(); !strings.Contains(msg, "id") && !strings.Contains(msg, "sequence") {
				t.Fatalf("parseNode(%q): %q names no part of the name", name, msg)
			}
			return
		}
		if n.seq < 0 || n.name != name || formatNode(n.id, n.seq) != name || len(n.id) != idLen {
			t.Fatalf("parseNode(%q) = %+v, written back as %q", name, n, formatNode(n.id, n.seq))
		}
	})
}

// FuzzQueueOrder: queue orders two accepted names by their sequences as
// ZooKeeper numbers them (older first) whatever order the server lists
// them in, consistently with the order of the names' sequence digits; a
// queue holding a refused name is refused, naming it.
func FuzzQueueOrder(f *testing.F) {
	f.Add(testID+"-0000000002", testID+"-0000000010")
	f.Add(testID+"-0000000010", "ffffffffffffffffffffffffffffffff-0000000009")
	f.Add(testID+"-0000000001", testID+"-00000000001")
	f.Fuzz(func(t *testing.T, a, b string) {
		na, ea := parseNode(a)
		nb, eb := parseNode(b)
		q1, bad1, why1 := queue([]string{a, b})
		q2, bad2, _ := queue([]string{b, a})
		if ea != nil || eb != nil {
			if q1 != nil || why1 == nil || (bad1 != a && bad1 != b) || bad2 != b && bad2 != a {
				t.Fatalf("queue(%q, %q) = %+v, %q: a refused name let through", a, b, q1, bad1)
			}
			return
		}
		if why1 != nil || len(q1) != 2 || len(q2) != 2 {
			t.Fatalf("queue(%q, %q) refused two accepted names: %v", a, b, why1)
		}
		if q1[0].seq > q1[1].seq || q2[0].seq > q2[1].seq {
			t.Fatalf("queue(%q, %q) not oldest first: %+v / %+v", a, b, q1, q2)
		}
		_, sa, _ := strings.Cut(a, "-")
		_, sb, _ := strings.Cut(b, "-")
		if (na.seq < nb.seq) != (sa < sb) || (na.seq == nb.seq) != (sa == sb) {
			t.Fatalf("sequences %d of %q and %d of %q order unlike their digits", na.seq, a, nb.seq, b)
		}
		if na.seq != nb.seq && q1[0].name != q2[0].name {
			t.Fatalf("queue(%q, %q) heads depend on the listing's order: %q / %q", a, b, q1[0].name, q2[0].name)
		}
	})
}

// FuzzEscapeKey: escapeKey makes one path component of safe bytes and
// %XX escapes, which unescapes to the key, and keeps prefixes (escapeKey(p)
// is a prefix of escapeKey(k) when p is a prefix of k, but for the whole
// names "." and "..": the seed ".0" found that); a string that unescapes is
// the escaping of its key.
func FuzzEscapeKey(f *testing.F) {
	for _, s := range []string{"k", "a/b", "50%", ".", "..", "é", "\x00", "%2F", "A-z_0.9~"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		e := escapeKey(key)
		if got, ok := unescapeKey(e); !ok || got != key {
			t.Fatalf("escapeKey(%q) = %q, unescaped as %q, %v", key, e, got, ok)
		}
		if strings.Contains(e, "/") || e == "." || e == ".." || key != "" && e == "" {
			t.Fatalf("escapeKey(%q) = %q is not one path component", key, e)
		}
		for i := 0; i <= len(key); i++ {
			if p := key[:i]; p != "." && p != ".." && !strings.HasPrefix(e, escapeKey(p)) {
				t.Fatalf("escapeKey(%q) = %q does not begin with escapeKey(%q) = %q", key, e, key[:i], escapeKey(key[:i]))
			}
		}
		if k2, ok := unescapeKey(key); ok && escapeKey(k2) != key {
			t.Fatalf("unescapeKey(%q) = %q, which escapes to %q", key, k2, escapeKey(k2))
		}
	})
}

// FuzzCheckURL: parseURL never panics; a refusal never shows the URL's
// password; an accepted URL, written back from the options parsed, parses
// to the same options.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"zk://127.0.0.1:2181", "zookeeper://a:1,b:2/locks/x?idle=1s&dial_timeout=2s",
		"zk://user:secretpw@h:1/p", "zk://u:sec%zzret@h:1", "zk://h:1/", "zk://h:1/zookeeper/x", "zk://h", "zk://", "zk://[::1]:2181/a%2Fb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		opts, err := parseURL(raw)
		if err != nil {
			// The password counts as shown only where the rest of the URL,
			// quoted as the message quotes it, cannot spell it too ("\x00" + "00").
			pw := password(raw)
			rest := strconv.Quote(strings.Replace(raw, pw, "", 1))
			if len(pw) >= 4 && strings.Count(raw, pw) == 1 && !strings.Contains(rest, pw) && strings.Contains(err.Error(), pw) {
				t.Fatalf("parseURL(%q): %q shows the password", raw, err)
			}
			return
		}
		if len(opts.Servers) == 0 || opts.Base != "" && !strings.HasPrefix(opts.Base, "/") {
			t.Fatalf("parseURL(%q) = %+v", raw, opts)
		}
		var b strings.Builder
		b.WriteString("zk://")
		if opts.Auth != "" {
			b.WriteString(url.PathEscape(opts.Auth) + "@")
		}
		b.WriteString(strings.Join(opts.Servers, ","))
		if opts.Base != "" {
			b.WriteString("/" + url.PathEscape(strings.TrimPrefix(opts.Base, "/")))
		}
		b.WriteString("?idle=" + url.QueryEscape(opts.IdleTimeout.String()) + "&dial_timeout=" + url.QueryEscape(opts.DialTimeout.String()))
		o2, err := parseURL(b.String())
		if err != nil || !slices.Equal(o2.Servers, opts.Servers) || o2.Base != opts.Base || o2.Auth != opts.Auth ||
			o2.IdleTimeout != opts.IdleTimeout || o2.DialTimeout != opts.DialTimeout {
			t.Fatalf("parseURL(%q) = %+v; written back as %q: %+v, %v", raw, opts, b.String(), o2, err)
		}
	})
}

// password returns the password of a zk:// URL as it is written, or "".
func password(raw string) string {
	_, rest, _ := strings.Cut(raw, "://")
	rest, _, _ = strings.Cut(rest, "?")
	hosts, _, _ := strings.Cut(rest, "/")
	at := strings.LastIndex(hosts, "@")
	if at < 0 {
		return ""
	}
	_, pw, _ := strings.Cut(hosts[:at], ":")
	return pw
}
