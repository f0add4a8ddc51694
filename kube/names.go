package kube

import (
	"crypto/sha256"
	"encoding/hex"
)

// objectName maps a key to its Lease's name: "leasehold-" and the first
// 20 bytes of the key's SHA-256 in hex. Every key gets a valid object name
// (a DNS subdomain: lowercase letters, digits and '-'), of one length, and
// no key gets another's; the key itself is kept in an annotation and
// checked on every read.
func objectName(key string) string {
	h := sha256.Sum256([]byte(key))
	return "leasehold-" + hex.EncodeToString(h[:20])
}
