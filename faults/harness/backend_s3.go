package harness

import (
	"context"
	"errors"
	"net/url"
	"time"

	"github.com/leasehold-go/leasehold/internal/testserver"
)

// S3 is one versitygw (posix backend, built by scripts/install/versitygw.sh)
// serving the bucket s3Bucket from a folder under the run's directory. The
// posix backend keeps objects (and their ETags, in extended attributes) as
// files, so F9 (kill and restart on the same folder) keeps the data.
type S3 struct {
	srv *testserver.Versity
}

// s3Bucket is the bucket the holders use; the store's objects go under the
// prefix s3Prefix.
const (
	s3Bucket = "leasehold"
	s3Prefix = "faults"
)

// s3ClockNote is why the harness cannot step versitygw's clock (F11).
const s3ClockNote = "versitygw is a static Go binary that reads the wall clock through the vDSO: LD_PRELOAD " +
	"(libfaketime, the harness's clockshift library) cannot reach it and a time namespace shifts only the " +
	"monotonic clocks, so stepping its clock means stepping the host's"

var errNoS3Clock = errors.New(s3ClockNote)

// Name implements Backend.
func (b *S3) Name() string { return "s3" }

// Start implements Backend: versitygw in dir, with the bucket made.
func (b *S3) Start(ctx context.Context, dir string) error {
	var err error
	b.srv, err = testserver.StartVersity(ctx, testserver.VersityOptions{Dir: dir, Buckets: []string{s3Bucket}})
	return err
}

// Endpoints implements Backend.
func (b *S3) Endpoints() []string { return []string{b.srv.Addr()} }

// URL implements Backend: the endpoint is eps[0] (the holder's proxy), and
// the credentials are in the URL, so the holder processes need no AWS_*
// environment (and ignore one they inherit).
func (b *S3) URL(eps []string) string {
	q := url.Values{}
	q.Set("endpoint", "http://"+eps[0])
	q.Set("region", testserver.VersityRegion)
	q.Set("access_key", testserver.VersityAccessKey)
	q.Set("secret_key", testserver.VersitySecretKey)
	return (&url.URL{Scheme: "s3", Host: s3Bucket, Path: "/" + s3Prefix, RawQuery: q.Encode()}).String()
}

// Close implements Backend. The server's folder stays with the run's.
func (b *S3) Close() error {
	if b.srv != nil {
		b.srv.Kill()
	}
	return nil
}

// PauseStore implements StorePauser.
func (b *S3) PauseStore() error { return b.srv.Pause() }

// ResumeStore implements StorePauser.
func (b *S3) ResumeStore() error { return b.srv.Resume() }

// KillStore implements StoreRestarter.
func (b *S3) KillStore() error { b.srv.Kill(); return nil }

// RestartStore implements StoreRestarter: on the same port and folder. The
// store keeps its data across a restart by design (an S3 service does not
// lose acknowledged writes), so wipe is not asked for (no Wiper).
func (b *S3) RestartStore(ctx context.Context, _ bool) error { return b.srv.Restart(ctx) }

// CanStepClock implements ClockStepper: it cannot (s3ClockNote says why).
func (b *S3) CanStepClock() (bool, string) { return false, s3ClockNote }

// StepClock implements ClockStepper: never called, CanStepClock says no.
func (b *S3) StepClock(time.Duration) error { return errNoS3Clock }

// TakeoverBound implements TakeoverBounder with the s3 store's documented
// bound (s3/doc.go): a dead holder's lease ends TTL after the whole second
// of its last write plus one second (Last-Modified is whole seconds), and
// an acquirer sees that only when the Date header of its read, also whole
// seconds and on versitygw up to a second behind the server's clock, has
// passed it: at most the TTL rounded up to whole seconds plus 2 s after the
// last write. The waiter then finds the key free on its next poll, which
// comes at most TTL/3 later (the Client's retry delay), and its acquire
// takes s3Requests more.
func (b *S3) TakeoverBound(ttl time.Duration) float64 {
	class := (ttl + time.Second - 1) / time.Second * time.Second
	return float64(class+2*time.Second+ttl/3+s3Requests) / float64(ttl)
}

// s3Requests is the allowance for the acquire that finds the key free: four
// requests (read the lease, read and raise the counter, write the lease).
const s3Requests = 100 * time.Millisecond
