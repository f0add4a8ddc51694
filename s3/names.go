package s3

import (
	"crypto/sha256"
	"encoding/hex"
)

// maxEscaped is the longest escaped key used as an object name as is;
// longer keys are named by their hash. It keeps every name one path
// component that file-system backed servers (versitygw's posix backend)
// can hold: at most 255 bytes with the store's prefixes.
const maxEscaped = 200

// objectName maps a key to one object-name component that is the same
// for every store and never collides with another key's:
//
//   - the key escaped: ASCII letters, digits, '_', '-' and a '.' that is
//     not the first byte are kept, every other byte is %XX (so "/" is
//     %2F: a key is never split into folders, and "a" and "a/x" can
//     both exist on a server that keeps objects as files);
//   - or, when that is longer than maxEscaped bytes, "!" and the SHA-256 of
//     the key in hex ('!' is always escaped, so the two forms never meet).
func objectName(key string) string {
	const hexDigits = "0123456789ABCDEF"
	b := make([]byte, 0, len(key))
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' && i > 0 {
			b = append(b, c)
			continue
		}
		b = append(b, '%', hexDigits[c>>4], hexDigits[c&15])
		if len(b) > maxEscaped {
			break
		}
	}
	if len(b) > maxEscaped {
		h := sha256.Sum256([]byte(key))
		return "!" + hex.EncodeToString(h[:])
	}
	return string(b)
}
