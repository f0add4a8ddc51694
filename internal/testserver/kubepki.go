package testserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// kubePKI is the key material a test kube-apiserver runs with, written as
// PEM files in one folder: a CA, the server's certificate signed by it
// (for 127.0.0.1 and localhost), a client certificate signed by it (user
// KubeCertUser in group system:masters), and the service-account key.
type kubePKI struct {
	CAFile                string
	ServerCert, ServerKey string
	ClientCert, ClientKey string
	ServiceAccountKey     string
	caCert                *x509.Certificate
	caKey                 *ecdsa.PrivateKey
	serial                int64 // the last serial number issued
}

// kubeCertDays is how long the test certificates are valid.
const kubeCertDays = 7

// newKubePKI writes the key material into dir.
func newKubePKI(dir string) (*kubePKI, error) {
	p := &kubePKI{
		CAFile:            filepath.Join(dir, "ca.crt"),
		ServerCert:        filepath.Join(dir, "server.crt"),
		ServerKey:         filepath.Join(dir, "server.key"),
		ClientCert:        filepath.Join(dir, "client.crt"),
		ClientKey:         filepath.Join(dir, "client.key"),
		ServiceAccountKey: filepath.Join(dir, "sa.key"),
	}
	var err error
	if p.caKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		return nil, err
	}
	ca := p.template(pkix.Name{CommonName: "leasehold-test-ca"})
	ca.IsCA, ca.BasicConstraintsValid = true, true
	ca.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, ca, ca, &p.caKey.PublicKey, p.caKey)
	if err != nil {
		return nil, err
	}
	if p.caCert, err = x509.ParseCertificate(der); err != nil {
		return nil, err
	}
	if err := writePEM(p.CAFile, "CERTIFICATE", der); err != nil {
		return nil, err
	}
	srv := p.template(pkix.Name{CommonName: "kube-apiserver"})
	srv.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	srv.DNSNames = []string{"localhost"}
	srv.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	if err := p.issue(srv, p.ServerCert, p.ServerKey); err != nil {
		return nil, err
	}
	cl := p.template(pkix.Name{CommonName: KubeCertUser, Organization: []string{"system:masters"}})
	cl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if err := p.issue(cl, p.ClientCert, p.ClientKey); err != nil {
		return nil, err
	}
	sa, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return p, writeKey(p.ServiceAccountKey, sa)
}

// template returns a certificate template for subject, valid from a
// minute ago (clocks of one machine) for a few days.
func (p *kubePKI) template(subject pkix.Name) *x509.Certificate {
	p.serial++
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: big.NewInt(p.serial),
		Subject:      subject,
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(kubeCertDays * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
}

// issue signs tmpl with the CA for a new key, writing both.
func (p *kubePKI) issue(tmpl *x509.Certificate, certFile, keyFile string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &key.PublicKey, p.caKey)
	if err != nil {
		return fmt.Errorf("testserver: sign %s: %w", tmpl.Subject.CommonName, err)
	}
	if err := writePEM(certFile, "CERTIFICATE", der); err != nil {
		return err
	}
	return writeKey(keyFile, key)
}

// writeKey writes key as a PEM "EC PRIVATE KEY", readable by its owner only.
func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "EC PRIVATE KEY", der)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
