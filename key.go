package leasehold

import (
	"fmt"
	"time"
	"unicode/utf8"
)

// Bounds on keys and TTLs that every store shares.
const (
	// MaxKeyLen is the longest key, in bytes.
	MaxKeyLen = 1024
	// MaxTTL is the longest TTL any store accepts.
	MaxTTL = 24 * time.Hour
)

// ValidateKey reports whether key is acceptable to every store: not empty,
// at most MaxKeyLen bytes, valid UTF-8, and free of NUL and other control
// bytes. The error wraps ErrInvalidKey and names the problem.
func ValidateKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: key is empty", ErrInvalidKey)
	case len(key) > MaxKeyLen:
		return fmt.Errorf("%w: key is %d bytes, longer than %d", ErrInvalidKey, len(key), MaxKeyLen)
	case !utf8.ValidString(key):
		return fmt.Errorf("%w: key %q is not valid UTF-8", ErrInvalidKey, key)
	}
	for i, r := range key {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Errorf("%w: key %q holds control byte %#x at offset %d", ErrInvalidKey, key, r, i)
		}
	}
	return nil
}

// ValidateTTL reports whether ttl is within the store's bounds and MaxTTL.
// The error wraps ErrInvalidTTL and names the bound.
func ValidateTTL(ttl time.Duration, info Info) error {
	switch {
	case ttl <= 0:
		return fmt.Errorf("%w: TTL %s is not positive", ErrInvalidTTL, ttl)
	case ttl > MaxTTL:
		return fmt.Errorf("%w: TTL %s is above the maximum %s", ErrInvalidTTL, ttl, MaxTTL)
	case info.MinTTL > 0 && ttl < info.MinTTL:
		return fmt.Errorf("%w: TTL %s is below the %s store's minimum %s", ErrInvalidTTL, ttl, info.Name, info.MinTTL)
	case info.MaxTTL > 0 && ttl > info.MaxTTL:
		return fmt.Errorf("%w: TTL %s is above the %s store's maximum %s", ErrInvalidTTL, ttl, info.Name, info.MaxTTL)
	}
	return nil
}
