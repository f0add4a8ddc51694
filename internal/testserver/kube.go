package testserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// The users a test kube-apiserver knows. KubeAdminUser and KubeCertUser
// are in group system:masters (every right); KubeNoRightsUser is
// authenticated but has no RBAC binding, so it may not touch Leases.
const (
	KubeAdminUser    = "leasehold-admin"
	KubeNoRightsUser = "leasehold-norights"
	KubeCertUser     = "leasehold-cert"
)

// KubeOptions configure a kube-apiserver. The zero value is a server with
// RBAC authorization over an etcd node of its own, in a new folder under
// the system's temporary folder.
type KubeOptions struct {
	// Dir is the folder the server's own folder is made in; "" means the
	// system's temporary folder.
	Dir string
	// Etcd is the cluster the server stores its objects in; nil starts a
	// single node for it (stopped with the server).
	Etcd *Etcd
	// Args are more arguments, after the defaults; Env is added to the
	// server's environment.
	Args []string
	Env  []string
}

// Kube is a running kube-apiserver on 127.0.0.1 with RBAC authorization,
// a token file (KubeAdminToken's user and KubeNoRightsUser) and a client
// CA (KubeCertUser's certificate), over an etcd.
type Kube struct {
	*Process
	Port int
	Dir  string // the server's folder: its log, certificates and token file
	Etcd *Etcd

	// CAFile signed the server's certificate and the client certificate.
	CAFile string
	// AdminToken and NoRightsToken are bearer tokens of KubeAdminUser and
	// KubeNoRightsUser.
	AdminToken, NoRightsToken string
	// ClientCert and ClientKey are KubeCertUser's certificate and key.
	ClientCert, ClientKey string

	ownEtcd bool
}

// StartKube starts kube-apiserver (and an etcd for it unless opts.Etcd)
// and waits until /readyz says ok: storage, RBAC's bootstrap roles and
// every other post-start hook are ready. A port taken meanwhile is retried
// with another. A missing binary wraps ErrNotInstalled.
func StartKube(ctx context.Context, opts KubeOptions) (_ *Kube, err error) {
	bin, err := FindBin("kube-apiserver", "kube-apiserver.sh")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(opts.Dir, "leasehold-kube-")
	if err != nil {
		return nil, err
	}
	k := &Kube{Dir: dir, Etcd: opts.Etcd}
	defer func() {
		if err != nil {
			k.stopEtcd()
			_ = os.RemoveAll(dir)
		}
	}()
	if err = k.prepare(); err != nil {
		return nil, err
	}
	if k.Etcd == nil {
		k.Etcd, err = StartEtcd(ctx, EtcdOptions{Dir: filepath.Join(dir, "etcd"), NoFsync: true})
		if err != nil {
			return nil, err
		}
		k.ownEtcd = true
	}
	for range 5 {
		if k.Port, err = FreePort(); err != nil {
			break
		}
		k.Process = NewProcess(Spec{
			Name: "kube-apiserver on port " + strconv.Itoa(k.Port),
			Path: bin, Args: append(k.args(), opts.Args...), Env: opts.Env,
			Log:   filepath.Join(dir, "stdout.log"),
			Probe: k.ready,
			// A cold start on a busy 2-core machine takes tens of seconds.
			StartTimeout: 3 * time.Minute,
			StopGrace:    5 * time.Second,
		})
		if err = k.Start(ctx); err == nil {
			return k, nil
		}
		if !errors.Is(err, ErrExited) {
			break
		}
	}
	return nil, err
}

// NewKube starts kube-apiserver for t (failing t if it cannot) and stops
// it when t ends.
func NewKube(t testing.TB, opts KubeOptions) *Kube {
	t.Helper()
	k, err := StartKube(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Stop)
	return k
}

// prepare writes the certificates and the token file.
func (k *Kube) prepare() error {
	if err := os.MkdirAll(filepath.Join(k.Dir, "pki"), 0o700); err != nil {
		return err
	}
	pki, err := newKubePKI(filepath.Join(k.Dir, "pki"))
	if err != nil {
		return err
	}
	k.CAFile, k.ClientCert, k.ClientKey = pki.CAFile, pki.ClientCert, pki.ClientKey
	k.AdminToken, k.NoRightsToken = randomToken(), randomToken()
	tokens := fmt.Sprintf("%s,%s,uid-admin,\"system:masters\"\n%s,%s,uid-norights\n",
		k.AdminToken, KubeAdminUser, k.NoRightsToken, KubeNoRightsUser)
	return os.WriteFile(k.tokenFile(), []byte(tokens), 0o600)
}

func (k *Kube) tokenFile() string { return filepath.Join(k.Dir, "tokens.csv") }

// args returns the server's command line.
func (k *Kube) args() []string {
	pki := filepath.Join(k.Dir, "pki")
	return []string{
		"--etcd-servers", k.Etcd.Nodes[0].ClientURL,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(k.Port),
		"--cert-dir", pki,
		"--tls-cert-file", filepath.Join(pki, "server.crt"),
		"--tls-private-key-file", filepath.Join(pki, "server.key"),
		"--client-ca-file", k.CAFile,
		"--token-auth-file", k.tokenFile(),
		"--authorization-mode", "RBAC",
		"--service-account-issuer", k.Endpoint(),
		"--service-account-key-file", filepath.Join(pki, "sa.key"),
		"--service-account-signing-key-file", filepath.Join(pki, "sa.key"),
		"--service-cluster-ip-range", "10.0.0.0/24",
		"--enable-priority-and-fairness=false",
		"--profiling=false",
		// A loopback advertise address is refused by the endpoint
		// reconciler (the "kubernetes" Service), which tests do not need.
		"--endpoint-reconciler-type", "none",
	}
}

// ready is the readiness probe: /readyz answers 200 to the admin.
func (k *Kube) ready(ctx context.Context) error {
	status, err := k.adminDo(ctx, http.MethodGet, "/readyz", nil)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("/readyz: %d %s", status, http.StatusText(status))
	}
	return err
}

// adminDo sends method path (with a JSON body, if any) as the admin and
// returns the answer's status.
func (k *Kube) adminDo(ctx context.Context, method, path string, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, method, k.Endpoint()+path, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+k.AdminToken)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc, err := k.httpClient()
	if err != nil {
		return 0, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// httpClient returns a client that trusts only the server's CA.
func (k *Kube) httpClient() (*http.Client, error) {
	pem, err := os.ReadFile(k.CAFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("testserver: no certificate in %s", k.CAFile)
	}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		TLSClientConfig:   &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
	}}, nil
}

// randomToken returns a fresh bearer token.
func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Addr returns host:port.
func (k *Kube) Addr() string { return "127.0.0.1:" + strconv.Itoa(k.Port) }

// Endpoint returns the server's URL.
func (k *Kube) Endpoint() string { return "https://" + k.Addr() }

// Kubeconfig writes a kubeconfig file into the server's folder and returns
// its path: cluster "leasehold" (this server, its CA) and three contexts,
// "admin" (the default: KubeAdminUser's token), "norights"
// (KubeNoRightsUser's token) and "cert" (KubeCertUser's client
// certificate), each with namespace ns. JSON is valid kubeconfig YAML.
func (k *Kube) Kubeconfig(ns string) (string, error) {
	type named = map[string]any
	ctx := func(name, user string) named {
		return named{"name": name, "context": named{"cluster": "leasehold", "user": user, "namespace": ns}}
	}
	cfg := named{
		"apiVersion": "v1", "kind": "Config", "current-context": "admin",
		"clusters": []named{{"name": "leasehold", "cluster": named{
			"server": k.Endpoint(), "certificate-authority": k.CAFile}}},
		"users": []named{
			{"name": "admin", "user": named{"token": k.AdminToken}},
			{"name": "norights", "user": named{"token": k.NoRightsToken}},
			{"name": "cert", "user": named{"client-certificate": k.ClientCert, "client-key": k.ClientKey}},
		},
		"contexts": []named{ctx("admin", "admin"), ctx("norights", "norights"), ctx("cert", "cert")},
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(k.Dir, "kubeconfig-"+ns)
	return path, os.WriteFile(path, b, 0o600)
}

// CreateNamespace makes namespace name as the admin; one that exists
// already is not an error.
func (k *Kube) CreateNamespace(ctx context.Context, name string) error {
	body, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]string{"name": name}})
	if err != nil {
		return err
	}
	status, err := k.adminDo(ctx, http.MethodPost, "/api/v1/namespaces", body)
	if err == nil && status != http.StatusCreated && status != http.StatusConflict {
		err = fmt.Errorf("testserver: create namespace %s: %d %s", name, status, http.StatusText(status))
	}
	return err
}

// Shutdown stops the server gracefully (SIGTERM, then SIGKILL after
// grace), keeping its folder and etcd, for a Restart on the same port.
func (k *Kube) Shutdown(grace time.Duration) { k.Halt(syscall.SIGTERM, grace) }

// Restart starts the server again on its port, etcd and certificates, and
// waits until it is ready.
func (k *Kube) Restart(ctx context.Context) error { return k.Start(ctx) }

// Stop stops the server, its etcd if it started one, and removes its
// folder.
func (k *Kube) Stop() {
	k.Process.Stop()
	k.stopEtcd()
	_ = os.RemoveAll(k.Dir)
}

func (k *Kube) stopEtcd() {
	if k.ownEtcd && k.Etcd != nil {
		k.Etcd.Stop()
	}
}
