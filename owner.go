package leasehold

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
)

// NewOwnerID returns an unguessable owner id: 128 random bits, hex encoded.
// A holder proves ownership with it on renew and release.
func NewOwnerID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// DefaultLabel is the holder label used when Options.Label is empty:
// "host:pid".
func DefaultLabel() string {
	h, err := os.Hostname()
	if err != nil {
		h = "unknown"
	}
	return fmt.Sprintf("%s:%d", h, os.Getpid())
}
