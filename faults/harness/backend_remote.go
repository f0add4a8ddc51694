package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/storeurl"
)

// Remote is a leasehold server (`leasehold serve`, a process of the
// leasehold binary) in front of another backend, the served store: the
// holders take their leases through the remote store (leasehold+http://)
// and reach the server through their proxies, so the link faults (F4-F7)
// hit the client-server link; the server's connections to the served store
// are direct. The store faults hit the server, not the served store: F8
// SIGSTOPs it, F9 SIGKILLs it and starts it again on the same port. The
// server keeps no data: a portable grant (sqlite, redis, PostgreSQL's lease
// rows, etcd: Info.PortableGrants) is rebuilt from its key, owner and token
// and renews through the new process, while a grant bound to the server's
// own sessions (PostgreSQL's advisory locks, the by-name-only row
// remote-postgres-advisory) is lost with it: its holder's next renewal is
// refused and its lease ends (the server's design, serve/doc.go).
type Remote struct {
	// Served is the backend the server serves.
	Served Backend
	// Leasehold is the leasehold binary the server runs; faults run and
	// suite build it from ../cmd.
	Leasehold string

	name string
	// endsOnKill: the served store frees a kept grant when the server's
	// connections end (PostgreSQL's advisory locks end with the session).
	endsOnKill bool
	kept       bool // the served store has no PortableGrants (from its Info)
	proc       *testserver.Process
	addr       string
}

// NewRemote returns the backend called name: a server in front of served.
// endsOnKill says the served store frees the grants the server keeps as
// soon as the server's process dies (its sessions end with their
// connections), which lets a waiting holder take a key while its holder
// still believes in it (LossFaults).
func NewRemote(name string, served Backend, endsOnKill bool) *Remote {
	return &Remote{Served: served, name: name, endsOnKill: endsOnKill}
}

// serveSweep is the server's sweep period (serve.Options.Sweep's default,
// which leasehold serve uses): a kept grant whose TTL passed is released
// within it.
const serveSweep = time.Second

// Name implements Backend.
func (b *Remote) Name() string { return b.name }

// Start implements Backend: the served store (its files under
// dir/served), set up as the harness sets up a store (Migrate), then the
// server on a free loopback port.
func (b *Remote) Start(ctx context.Context, dir string) error {
	if b.Leasehold == "" {
		return errors.New("faults: the remote stores need the leasehold binary (Remote.Leasehold; faults run and suite build it)")
	}
	sdir := filepath.Join(dir, "served")
	if err := os.MkdirAll(sdir, 0o755); err != nil {
		return err
	}
	if err := b.Served.Start(ctx, sdir); err != nil {
		return fmt.Errorf("the served store: %w", err)
	}
	url := b.Served.URL(b.Served.Endpoints())
	info, err := setUp(ctx, url)
	if err != nil {
		return err
	}
	b.kept = !info.PortableGrants
	port, err := testserver.FreePort()
	if err != nil {
		return err
	}
	b.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	b.proc = testserver.NewProcess(testserver.Spec{
		Name: "leasehold-serve", Path: b.Leasehold, Log: filepath.Join(dir, "serve.log"),
		Args:  []string{"serve", "--store", url, "--listen", b.addr, "--insecure-loopback"},
		Probe: b.probe, StopGrace: 5 * time.Second,
	})
	return b.proc.Start(ctx)
}

// setUp opens the served store once, migrates it if it has a schema
// (PostgreSQL's tables), as the harness's first probe does for a store it
// opens itself (the remote store has no Migrate to pass on), and returns
// its Info.
func setUp(ctx context.Context, url string) (leasehold.Info, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	s, err := storeurl.Open(ctx, url)
	if err != nil {
		return leasehold.Info{}, fmt.Errorf("open the served store %s: %w", url, err)
	}
	defer s.Close()
	if m, ok := s.(interface{ Migrate(context.Context) error }); ok {
		if err := m.Migrate(ctx); err != nil {
			return leasehold.Info{}, fmt.Errorf("set up the served store %s: %w", url, err)
		}
	}
	return s.Info(), nil
}

// probe passes once the server answers /v1/info.
func (b *Remote) probe(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+b.addr+"/v1/info", nil)
	if err != nil {
		return err
	}
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /v1/info: %s", resp.Status)
	}
	return nil
}

// Endpoints implements Backend: the server.
func (b *Remote) Endpoints() []string { return []string{b.addr} }

// URL implements Backend.
func (b *Remote) URL(eps []string) string { return "leasehold+http://" + eps[0] }

// Close implements Backend: the server, then the served store.
func (b *Remote) Close() error {
	if b.proc != nil {
		b.proc.Kill()
	}
	return b.Served.Close()
}

// PauseStore implements StorePauser: SIGSTOP of the server (F8); the
// served store runs on.
func (b *Remote) PauseStore() error { return b.proc.Pause() }

// ResumeStore implements StorePauser.
func (b *Remote) ResumeStore() error { return b.proc.Resume() }

// KillStore implements StoreRestarter: SIGKILL of the server (F9); the
// served store runs on.
func (b *Remote) KillStore() error { b.proc.Kill(); return nil }

// RestartStore implements StoreRestarter: a new server process on the same
// port and served store. It keeps nothing of the old one, so wipe changes
// nothing.
func (b *Remote) RestartStore(ctx context.Context, _ bool) error { return b.proc.Restart(ctx) }

// RestartNote implements the note of F9 for the report.
func (b *Remote) RestartNote() string {
	if b.kept {
		return "F9 on " + b.name + " kills and restarts the leasehold server, not the served store: the grants it kept (bound to its sessions: the served store has no PortableGrants) end with it, and their holders' next renewal is refused (a lost lease, by design)"
	}
	return "F9 on " + b.name + " kills and restarts the leasehold server, not the served store: its grants are portable (rebuilt from key, owner and token) and renew through the new process"
}

// LossFaults implements GrantLoser: where the served store frees the
// grants the server kept when the server's process dies (endsOnKill), a
// waiting holder may take a key in F9 before its holder's next renewal
// tells it the lease is gone.
func (b *Remote) LossFaults() []string {
	if b.endsOnKill {
		return []string{check.F9}
	}
	return nil
}

// WipeNote says why F9b does not apply.
func (b *Remote) WipeNote() string {
	return "the leasehold server keeps no data: every restart (F9) is one without its memory; the data is the served store's"
}

// TakeoverBound implements TakeoverBounder: the served store's bound,
// and where the server keeps the grants, at least the TTL the server
// measures plus its sweep and a release.
func (b *Remote) TakeoverBound(ttl time.Duration) float64 {
	bound := 1 + 1.0/3
	if tb, ok := b.Served.(TakeoverBounder); ok {
		bound = tb.TakeoverBound(ttl)
	}
	if b.kept {
		bound = max(bound, float64(ttl+serveSweep+100*time.Millisecond)/float64(ttl))
	}
	return bound
}
