package core

import (
	"errors"
	"fmt"
)

// ErrUnexpectedReply: the server answered a script with a reply of a shape
// the script never returns (a proxy in the way, a foreign script cached
// under the same SHA, a client library returning an unknown type).
var ErrUnexpectedReply = errors.New("unexpected reply")

func unexpected(script string, r any) error {
	s := fmt.Sprintf("%#v", r)
	if len(s) > 120 {
		s = s[:120] + "..."
	}
	return fmt.Errorf("%w to %s script: %s", ErrUnexpectedReply, script, s)
}

func asInt(r any) (int64, bool) {
	switch v := r.(type) {
	case int64:
		return v, true
	case int:
		return int64(v), true
	}
	return 0, false
}

func asString(r any) (string, bool) {
	switch v := r.(type) {
	case string:
		return v, true
	case []byte:
		return string(v), true
	}
	return "", false
}

// asToken reads a token the acquire script returns: a string (or an
// integer) from 1 to MaxToken.
func asToken(r any) (uint64, bool) {
	s, ok := asString(r)
	if !ok {
		n, ok := asInt(r)
		return uint64(n), ok && n > 0 && n <= MaxToken
	}
	n, err := ParseToken(s)
	return n, err == nil
}

// parseBool reads a script's 1 or 0.
func parseBool(script string, r any) (bool, error) {
	n, ok := asInt(r)
	if !ok || (n != 0 && n != 1) {
		return false, unexpected(script, r)
	}
	return n == 1, nil
}
