package fence

import (
	"fmt"
	"strconv"
)

// Header is the HTTP header that carries a lease's fencing token: the token
// as a decimal uint64 with no sign, spaces or other decoration (for example
// "Fencing-Token: 42"). A resource accepts a request only if its token is
// greater than or equal to the highest token it has seen for that resource,
// and answers 409 Conflict otherwise.
const Header = "Fencing-Token"

// ParseToken parses the value of a [Header]: a decimal uint64 made of ASCII
// digits only. It returns an error matching [ErrMalformedToken] for anything
// else, including an empty string, a sign, spaces, or a value above the
// uint64 range.
func ParseToken(s string) (uint64, error) {
	if s == "" {
		return 0, fmt.Errorf("%w: empty value", ErrMalformedToken)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%w: %q is not a decimal number", ErrMalformedToken, truncate(s))
		}
	}
	token, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q is out of the uint64 range", ErrMalformedToken, truncate(s))
	}
	return token, nil
}

// FormatToken returns the [Header] value for token.
func FormatToken(token uint64) string {
	return strconv.FormatUint(token, 10)
}

// truncate shortens a string quoted in an error message.
func truncate(s string) string {
	const max = 40
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}
