package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeTLS: leasehold serve with a certificate and a token file, and a
// run through leasehold+https:// by a client that trusts the certificate
// (SSL_CERT_FILE); a client that does not is refused by TLS.
func TestServeTLS(t *testing.T) {
	e := newEnv(t)
	cert, key := selfSigned(t, e.dir)
	tokens, client := filepath.Join(e.dir, "tokens"), filepath.Join(e.dir, "client-token")
	writeFile(t, tokens, "ci ci-token-0123456789abcdef * *\n")
	writeFile(t, client, "ci-token-0123456789abcdef\n")
	_, ann := startServe(t, e, "--store", e.store, "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key, "--token-file", tokens)
	if !strings.HasPrefix(ann.URL, "https://") {
		t.Fatalf("serve announced %q, want https", ann.URL)
	}
	store := "leasehold+" + ann.URL + "?token_file=" + url.QueryEscape(client)
	trust := []string{"SSL_CERT_FILE=" + cert}
	if code, out, stderr := e.lh(trust, "run", "--store", store, "jobs/tls", "--", "sh", "-c", "echo $LEASEHOLD_TOKEN"); code != 0 || strings.TrimSpace(out) != "1" {
		t.Fatalf("run over TLS exited %d, printed %q: %s", code, out, stderr)
	}
	if code, _, stderr := e.lh([]string{"SSL_CERT_FILE=/dev/null"}, "run", "--store", store, "jobs/tls", "--", "true"); code == 0 || !strings.Contains(stderr, "certificate") {
		t.Errorf("run by a client that does not trust the certificate exited %d: %s", code, stderr)
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key
// in dir and returns their paths.
func selfSigned(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "leasehold serve test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writeFile(t, cert, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	writeFile(t, key, string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})))
	return cert, key
}
