package redis

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzCutPrefix: leasehold's prefix option comes out of any URL whole: what
// is left holds no prefix option (cutting again changes nothing), and the
// prefix put back on the URL cuts out the same.
func FuzzCutPrefix(f *testing.F) {
	for _, s := range []string{
		"redis://h:1/0", "redis://h:1/0?prefix=app:", "redis://h:1/0?dial_timeout=1s&prefix=a%26b",
		"rediss://u:p@h:1?prefix=", "redis://h?%zz", "?prefix=x&prefix=y", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		rest, prefix, err := cutPrefix(raw)
		if err != nil {
			if !strings.Contains(raw, "?") || !strings.Contains(err.Error(), "bad query") {
				t.Fatalf("cutPrefix(%q): %v", raw, err)
			}
			return
		}
		if !strings.Contains(raw, "?") && (rest != raw || prefix != "") {
			t.Fatalf("cutPrefix(%q) = %q, %q; want it unchanged", raw, rest, prefix)
		}
		rest2, p2, err := cutPrefix(rest)
		if err != nil || rest2 != rest || p2 != "" {
			t.Fatalf("cutPrefix(%q) = %q; cut again: %q, %q, %v", raw, rest, rest2, p2, err)
		}
		base, _, _ := strings.Cut(rest, "?")
		if !strings.Contains(base, "?") {
			if _, p3, err := cutPrefix(base + "?prefix=" + url.QueryEscape(prefix)); err != nil || p3 != prefix {
				t.Fatalf("prefix %q put back on %q cuts out as %q, %v", prefix, base, p3, err)
			}
		}
	})
}
