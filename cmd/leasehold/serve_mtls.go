package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// clientCATLS returns the TLS configuration of a server that asks each
// client for a certificate and verifies one it is shown against the CAs of
// the PEM file caFile; a certificate of another CA fails the handshake. A
// client may still show none and send a bearer token instead. With no file
// it returns nil (no client certificates).
func clientCATLS(caFile string) (*tls.Config, error) {
	if caFile == "" {
		return nil, nil
	}
	b, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("--tls-client-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("--tls-client-ca %s: no PEM certificate in the file", caFile)
	}
	return &tls.Config{ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: pool, MinVersion: tls.VersionTLS12}, nil
}
