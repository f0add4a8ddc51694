package s3

import (
	"strings"
	"testing"
)

func TestObjectName(t *testing.T) {
	long := strings.Repeat("z", 1000)
	cases := map[string]string{
		"a":               "a",
		"reports/nightly": "reports%2Fnightly",
		"a/":              "a%2F",
		"a%2F":            "a%252F",
		".":               "%2E",
		"..":              "%2E.",
		"a.b":             "a.b",
		"a b*:":           "a%20b%2A%3A",
		"ключ":            "%D0%BA%D0%BB%D1%8E%D1%87",
		"!x":              "%21x",
	}
	for k, want := range cases {
		if got := objectName(k); got != want {
			t.Errorf("objectName(%q) = %q, want %q", k, got, want)
		}
	}
	h := objectName(long)
	if !strings.HasPrefix(h, "!") || len(h) != 65 || objectName(long+"y") == h {
		t.Errorf("a long key's name %q: want ! and a distinct SHA-256", h)
	}
	if n := objectName(strings.Repeat("/", 66)); len(n) != 198 {
		t.Errorf("a key escaping to 198 bytes: %q, want it escaped", n)
	}
	if n := objectName(strings.Repeat("/", 67)); !strings.HasPrefix(n, "!") {
		t.Errorf("a key escaping to more than %d bytes: %q, want the hashed form", maxEscaped, n)
	}
}
