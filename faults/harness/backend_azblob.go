package harness

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/leasehold-go/leasehold/azblob"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

// Azblob is the Azure Blob store on one Azurite blob service that keeps
// its blobs on disk (--location), so that a store restart (F9) finds
// them again as Azure would: Azure never loses a blob it acknowledged,
// least of all the counter blob that holds the fencing token.
//
// Azurite forgets the leases themselves when it restarts (see
// RestartNote), which Azure never does.
//
// Azurite saves its metadata every 5 s and when it stops on SIGTERM; a
// SIGKILL would lose the last seconds of writes, the counter blob's bumps
// among them, which is an artefact of the emulator and no failure Azure
// has. Its store kill is therefore a SIGTERM (Azurite stops serving,
// saves and exits), followed by the restart on the same port and data.
//
// The holders reach Azurite through their proxies with Azurite's public
// development account and key, in the URL (auth=key&key=...): a URL
// whose endpoint is the holder's own proxy, and no environment to pass.
type Azblob struct {
	srv *testserver.Azurite
}

// azblobContainer is the container the runs' blobs live in.
const azblobContainer = "leasehold-faults"

// azblobStopGrace bounds Azurite's graceful stop before it is killed.
const azblobStopGrace = 10 * time.Second

// Name implements Backend.
func (b *Azblob) Name() string { return "azblob" }

// Start implements Backend: Azurite with its blobs under dir, and the
// store's container (the store's Migrate).
func (b *Azblob) Start(ctx context.Context, dir string) error {
	var err error
	b.srv, err = testserver.StartAzurite(ctx, testserver.AzuriteOptions{Dir: dir, OnDisk: true})
	if err != nil {
		return err
	}
	s, err := azblob.OpenSharedKey(b.srv.BlobEndpoint(), testserver.AzuriteAccount, testserver.AzuriteKey, azblobContainer)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		return fmt.Errorf("create the container: %w", err)
	}
	return nil
}

// Endpoints implements Backend.
func (b *Azblob) Endpoints() []string { return []string{b.srv.Addr()} }

// URL implements Backend: the development account on eps[0], with its
// key in the URL.
func (b *Azblob) URL(eps []string) string {
	q := url.Values{}
	q.Set("endpoint", "http://"+eps[0]+"/"+testserver.AzuriteAccount)
	q.Set("auth", "key")
	q.Set("key", testserver.AzuriteKey)
	u := url.URL{Scheme: "azblob", Host: testserver.AzuriteAccount, Path: "/" + azblobContainer, RawQuery: q.Encode()}
	return u.String()
}

// Close implements Backend.
func (b *Azblob) Close() error {
	if b.srv != nil {
		b.srv.Kill()
	}
	return nil
}

// PauseStore implements StorePauser: Azurite SIGSTOPped.
func (b *Azblob) PauseStore() error { return b.srv.Pause() }

// ResumeStore implements StorePauser.
func (b *Azblob) ResumeStore() error { return b.srv.Resume() }

// KillStore implements StoreRestarter: a SIGTERM, so that Azurite saves
// what it acknowledged (see Azblob).
func (b *Azblob) KillStore() error { b.srv.Shutdown(azblobStopGrace); return nil }

// RestartStore implements StoreRestarter: on the same port and blobs.
// Azure keeps its blobs, so there is no restart without data (F9b).
func (b *Azblob) RestartStore(ctx context.Context, _ bool) error { return b.srv.Restart(ctx) }

// RestartNote says what Azurite's restart does not keep: the leases.
// Azurite 3.37 reads a lease's expiry time back from its database as a
// string, which compares as already past, so every lease taken before the
// restart is expired after it, while the blobs and their metadata (the
// counter blob's token among them) are kept. Azure keeps a lease for its
// whole duration.
func (b *Azblob) RestartNote() string {
	return "F9 on Azurite is a SIGTERM, not a SIGKILL (Azurite saves its metadata every 5 s and when it stops, so a SIGKILL would lose acknowledged writes, which Azure never does), then a restart on its data; the blobs (and the counter blob's token) survive the restart but the leases do not (Azurite 3.37 reads a lease's expiry time back from its database as a string, which compares as already past), so a holder can be granted a key another holder still believes it holds: concurrent holders under F9 are the emulator's, not Azure's, which keeps a lease for its whole duration; the tokens still fence them"
}

// WipeNote says why F9b does not apply.
func (b *Azblob) WipeNote() string {
	return "Azure never loses an acknowledged blob, the counter blob with the fencing token included: no restart without data"
}

// TakeoverBound implements TakeoverBounder with the store's bound: Azure
// ends a dead holder's lease one lease duration (the TTL rounded up to
// whole seconds) after its last renewal, which came at most one renew
// period (TTL/3) before the holder died.
func (b *Azblob) TakeoverBound(ttl time.Duration) float64 {
	lease := (ttl + time.Second - 1) / time.Second * time.Second
	return float64(lease+ttl/3) / float64(ttl)
}

// CanStepClock implements ClockStepper: it cannot.
func (b *Azblob) CanStepClock() (bool, string) {
	return false, "Azurite's clock is the machine's (Azure's is Azure's): no way to step it without stepping the host's"
}

// StepClock implements ClockStepper; never called, as CanStepClock says no.
func (b *Azblob) StepClock(time.Duration) error {
	_, why := b.CanStepClock()
	return fmt.Errorf("azblob: %s", why)
}

// LateCleanup implements LateCleanupStore: it does not apply.
func (b *Azblob) LateCleanup() (LateCleanup, bool, string) {
	return LateCleanup{}, false, "the store's clean-up (the release of a lease whose token write failed) names the lease id derived from that attempt's owner id, and every attempt has a fresh owner id, so it cannot reach a later grant; the harness does not recognise a granted acquire's reply in HTTP"
}
