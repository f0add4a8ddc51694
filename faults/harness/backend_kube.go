package harness

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold/internal/testserver"

	"github.com/leasehold-go/leasehold/faults/check"
)

// Kube is the kube store on one kube-apiserver over an etcd node of its
// own (scripts/install/kube-apiserver.sh and etcd.sh), with its folders
// under the run's directory. The holders reach the apiserver through their
// proxies over TLS (HTTP/2): a proxy relays the TCP stream, so latency
// (F4), partitions (F6) and resets (F7) act on it as on any store. Lost
// replies (F5) act on it too, but only the first reply of a connection
// opened before the fault is the answer of a request the apiserver
// applied; a new connection's first reply is the TLS handshake's, so for
// the rest of the window the holder cannot reach the apiserver at all.
// F8 SIGSTOPs the apiserver, F9 SIGKILLs it and starts it again on its
// port and etcd, and F9k does the same to its etcd under the running
// apiserver. The store reads no clock of the server's (F11).
type Kube struct {
	k *testserver.Kube
	// kubeconfig is the admin's kubeconfig for kubeNamespace; URL writes a
	// copy per proxy with the proxy's address in place of the server's.
	kubeconfig string
	dir        string
}

// kubeNamespace is the namespace of the holders' Leases.
const kubeNamespace = "leasehold-faults"

// kubeClockNote is why the harness does not step the apiserver's clock
// (F11).
const kubeClockNote = "the kube store reads no clock of the server's (expiry is judged on the waiter's own " +
	"monotonic clock, tokens floor at a resourceVersion), so a step of the apiserver's or etcd's clock changes nothing the store uses"

var errNoKubeClock = errors.New(kubeClockNote)

// Name implements Backend.
func (b *Kube) Name() string { return "kube" }

// FaultNote says how F5 acts on the apiserver's TLS stream: in part.
func (b *Kube) FaultNote(id string) string {
	if id != check.F5 {
		return ""
	}
	return "acts only in part on this store: the first reply of a connection opened before the fault (the answer to a request the apiserver applied) is lost; a new connection's first reply is the TLS handshake's, so for the rest of the window the holder cannot reach the apiserver at all (a partition)"
}

// Start implements Backend: etcd and kube-apiserver with their folders
// under dir, and the holders' namespace.
func (b *Kube) Start(ctx context.Context, dir string) error {
	var err error
	b.dir = dir
	if b.k, err = testserver.StartKube(ctx, testserver.KubeOptions{Dir: dir}); err != nil {
		return err
	}
	if err := b.k.CreateNamespace(ctx, kubeNamespace); err != nil {
		return err
	}
	path, err := b.k.Kubeconfig(kubeNamespace)
	if err != nil {
		return err
	}
	kc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	b.kubeconfig = string(kc)
	return nil
}

// Endpoints implements Backend.
func (b *Kube) Endpoints() []string { return []string{b.k.Addr()} }

// URL implements Backend: a kubeconfig whose server is eps[0] (the
// holder's proxy, on 127.0.0.1 as the server's certificate names), written
// next to the server's folders. A kubeconfig that cannot be written names
// a file that does not exist: the holder's open fails, naming it.
func (b *Kube) URL(eps []string) string {
	path := filepath.Join(b.dir, "kubeconfig-"+strings.ReplaceAll(eps[0], ":", "-"))
	kc := strings.ReplaceAll(b.kubeconfig, b.k.Endpoint(), "https://"+eps[0])
	_ = os.WriteFile(path, []byte(kc), 0o600)
	return "kube:///" + kubeNamespace + "?" + url.Values{"kubeconfig": {path}}.Encode()
}

// Close implements Backend. The servers' folders stay with the run's.
func (b *Kube) Close() error {
	if b.k != nil {
		testserver.KillAll(b.k.Process, b.k.Etcd.Nodes[0].Process)
	}
	return nil
}

// PauseStore implements StorePauser: the apiserver (its etcd runs on).
func (b *Kube) PauseStore() error { return b.k.Pause() }

// ResumeStore implements StorePauser.
func (b *Kube) ResumeStore() error { return b.k.Resume() }

// KillStore implements StoreRestarter: the apiserver.
func (b *Kube) KillStore() error { b.k.Kill(); return nil }

// RestartStore implements StoreRestarter: the apiserver on its port and
// etcd, ready (/readyz). Its objects are in etcd, which keeps them, so
// wipe is not asked for (no Wiper).
func (b *Kube) RestartStore(ctx context.Context, _ bool) error { return b.k.Process.Restart(ctx) }

// KillBacking implements BackingRestarter: the apiserver's etcd.
func (b *Kube) KillBacking() error { b.k.Etcd.Kill(0); return nil }

// RestartBacking implements BackingRestarter: etcd on its data and port,
// healthy; the apiserver, left running, reconnects on its own.
func (b *Kube) RestartBacking(ctx context.Context) error {
	if err := b.k.Etcd.Restart(0); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, etcdWait)
	defer cancel()
	if err := b.k.Etcd.WaitHealthy(ctx); err != nil {
		return fmt.Errorf("%w\n%s", err, b.k.Etcd.Logs())
	}
	return nil
}

// CanStepClock implements ClockStepper: there is nothing to step
// (kubeClockNote says why).
func (b *Kube) CanStepClock() (bool, string) { return false, kubeClockNote }

// StepClock implements ClockStepper: never called, CanStepClock says no.
func (b *Kube) StepClock(time.Duration) error { return errNoKubeClock }

// TakeoverBound implements TakeoverBounder with the kube store's
// documented bound (kube/doc.go), clock-free: a waiter first reads a dead
// holder's last write at most one poll (TTL/3, the Client's retry delay
// cap) after it was made, may take the key once it has seen that
// resourceVersion unchanged for the TTL, finds that moment within one
// more poll, and its acquire takes kubeRequests more.
func (b *Kube) TakeoverBound(ttl time.Duration) float64 {
	return float64(ttl+ttl/3+ttl/3+kubeRequests) / float64(ttl)
}

// kubeRequests is the allowance for the acquire that takes the key: two
// requests over TLS (GET the Lease, UPDATE it on its resourceVersion).
const kubeRequests = 200 * time.Millisecond
