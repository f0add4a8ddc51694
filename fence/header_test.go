package fence

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestParseToken(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true},
		{"1", 1, true},
		{"42", 42, true},
		{"007", 7, true},
		{"18446744073709551615", math.MaxUint64, true},
		{"18446744073709551616", 0, false}, // overflow
		{"", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{" 1", 0, false},
		{"1 ", 0, false},
		{"1,2", 0, false},
		{"0x10", 0, false},
		{"1_000", 0, false},
		{"1e3", 0, false},
		{"１", 0, false}, // full-width digit
		{strings.Repeat("9", 100), 0, false},
	}
	for _, tt := range tests {
		got, err := ParseToken(tt.in)
		if tt.ok {
			if err != nil || got != tt.want {
				t.Errorf("ParseToken(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
			continue
		}
		if !errors.Is(err, ErrMalformedToken) {
			t.Errorf("ParseToken(%q) = %d, %v; want ErrMalformedToken", tt.in, got, err)
		}
		if len(err.Error()) > 200 {
			t.Errorf("ParseToken(%q): error message too long: %d bytes", tt.in, len(err.Error()))
		}
	}
}

func TestFormatTokenRoundTrip(t *testing.T) {
	for _, tok := range []uint64{0, 1, 10, 1 << 40, math.MaxInt64, math.MaxUint64} {
		got, err := ParseToken(FormatToken(tok))
		if err != nil || got != tok {
			t.Errorf("ParseToken(FormatToken(%d)) = %d, %v", tok, got, err)
		}
	}
}

func TestStaleError(t *testing.T) {
	tests := []struct {
		err  *StaleError
		want string
	}{
		{&StaleError{Token: 3}, "fence: stale fencing token 3"},
		{&StaleError{Resource: "/x", Token: 3}, "fence: stale fencing token 3 for /x"},
		{&StaleError{Resource: "/x", Token: 3, Highest: 5}, "fence: stale fencing token 3 for /x: a newer holder wrote with token 5"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q; want %q", got, tt.want)
		}
		if !errors.Is(tt.err, ErrStale) {
			t.Errorf("%v does not match ErrStale", tt.err)
		}
		if errors.Is(tt.err, ErrNoRow) {
			t.Errorf("%v matches ErrNoRow", tt.err)
		}
		var se *StaleError
		if !errors.As(error(tt.err), &se) || se != tt.err {
			t.Errorf("errors.As failed for %v", tt.err)
		}
	}
}
