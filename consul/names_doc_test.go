package consul

import (
	"os"
	"regexp"
	"testing"
)

// TestDocListsKeptBytes: the package doc lists exactly the bytes escapeKey
// keeps besides letters and digits (it once left out ',').
func TestDocListsKeptBytes(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`escaping keeps letters, digits and the bytes in\s*//\s*"([^"]*)"`).FindSubmatch(doc)
	if m == nil {
		t.Fatal(`doc.go does not say "escaping keeps letters, digits and the bytes in "..."`)
	}
	if got := string(m[1]); got != keptBytes {
		t.Errorf("doc.go lists %q, escapeKey keeps %q", got, keptBytes)
	}
	for c := 0; c < 256; c++ {
		b := byte(c)
		alnum := 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
		if safe(b) != (alnum || regexp.MustCompile(regexp.QuoteMeta(string(b))).MatchString(keptBytes)) {
			t.Errorf("byte %q: safe %v disagrees with the list", b, safe(b))
		}
	}
}
