package fence

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseToken: a Fencing-Token value is accepted exactly when it is
// ASCII digits within the uint64 range; an accepted value round-trips
// through FormatToken, a refused one matches ErrMalformedToken with a
// bounded message, and RequestToken agrees with ParseToken for one header
// and refuses two.
func FuzzParseToken(f *testing.F) {
	for _, s := range []string{"0", "42", "007", "18446744073709551615", "18446744073709551616",
		"", "-1", "+1", " 1", "1\n", "0x10", "１", "99999999999999999999999999"} {
		f.Add(s, false)
	}
	f.Add("5", true)
	f.Fuzz(func(t *testing.T, s string, twice bool) {
		tok, err := ParseToken(s)
		digits := s != "" && strings.Trim(s, "0123456789") == ""
		want, werr := strconv.ParseUint(s, 10, 64)
		switch {
		case err != nil:
			if !errors.Is(err, ErrMalformedToken) {
				t.Fatalf("ParseToken(%q) = %v, not ErrMalformedToken", s, err)
			}
			if digits && werr == nil {
				t.Fatalf("ParseToken(%q) refused a decimal uint64: %v", s, err)
			}
			// The message quotes at most 40 bytes of the input, each at
			// most 4 bytes once escaped.
			if len(err.Error()) > 300 {
				t.Fatalf("ParseToken's error is %d bytes long: it quotes its input whole", len(err.Error()))
			}
		case !digits || werr != nil || tok != want:
			t.Fatalf("ParseToken(%q) = %d, want a refusal or %d", s, tok, want)
		default:
			if back, err := ParseToken(FormatToken(tok)); err != nil || back != tok {
				t.Fatalf("FormatToken(%d) = %q parses back as %d, %v", tok, FormatToken(tok), back, err)
			}
		}
		r, _ := http.NewRequest(http.MethodPost, "http://x/", nil)
		r.Header.Add(Header, s)
		if twice {
			r.Header.Add(Header, s)
		}
		rtok, rerr := RequestToken(r)
		if twice {
			if !errors.Is(rerr, ErrMalformedToken) {
				t.Fatalf("RequestToken with two %s headers %q: %d, %v; want ErrMalformedToken", Header, s, rtok, rerr)
			}
			return
		}
		if rtok != tok || (rerr == nil) != (err == nil) {
			t.Fatalf("RequestToken(%q) = %d, %v; ParseToken = %d, %v", s, rtok, rerr, tok, err)
		}
	})
}

// FuzzQuoteTable: a table name is quoted only when each of its at most
// three dotted parts is a plain identifier; the quoted name unquotes back
// to the name, and a refusal matches ErrInvalidIdentifier (or names an
// unknown dialect).
func FuzzQuoteTable(f *testing.F) {
	for _, s := range []string{"leases", "public.leases", "a.b.c", "a.b.c.d", `x"; DROP TABLE y; --`, "a`b", "", ".", "_1", "1a"} {
		f.Add(s, 0)
		f.Add(s, 2)
	}
	f.Add("t", 7)
	f.Fuzz(func(t *testing.T, name string, dialect int) {
		d := Dialect(dialect)
		q, err := d.QuoteTable(name)
		if err != nil {
			if d.valid() == nil && !errors.Is(err, ErrInvalidIdentifier) {
				t.Fatalf("QuoteTable(%q) = %v, not ErrInvalidIdentifier", name, err)
			}
			return
		}
		mark := `"`
		if d == MySQL {
			mark = "`"
		}
		parts := strings.Split(q, ".")
		for i, p := range parts {
			inner, opened := strings.CutPrefix(p, mark)
			inner, closed := strings.CutSuffix(inner, mark)
			if !opened || !closed || strings.Contains(inner, mark) || !identifierRE.MatchString(inner) {
				t.Fatalf("QuoteTable(%q) = %q: part %d %q is not one quoted identifier", name, q, i, p)
			}
			parts[i] = inner
		}
		if back := strings.Join(parts, "."); back != name {
			t.Fatalf("QuoteTable(%q) = %q, which unquotes to %q", name, q, back)
		}
	})
}
