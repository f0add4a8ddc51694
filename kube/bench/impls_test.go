package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/leasehold-go/leasehold/internal/benchcycle"
	"github.com/leasehold-go/leasehold/kube"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordv1 "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

// ttl is every implementation's lease: the store's TTL, the peer's
// LeaseDuration and the floor's leaseDurationSeconds.
const ttl = 10 * time.Second

// config returns the admin's client configuration, without client-go's
// default client-side rate limit (5 requests/s), which the store also
// turns off: every implementation sends as fast as the server answers.
func config() *rest.Config {
	return &rest.Config{Host: server.Endpoint(), BearerToken: server.AdminToken,
		TLSClientConfig: rest.TLSClientConfig{CAFile: server.CAFile}, QPS: -1}
}

// impls returns the implementations, each on an HTTP client of its own
// made from cfg(name) (the store and the Client: cfg("store")), closed
// when b ends.
func impls(b *testing.B, cfg func(impl string) *rest.Config) []benchcycle.Impl {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := kube.New(ctx, cfg("store"), namespace, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	lc := benchcycle.NewClient(b, st)
	return []benchcycle.Impl{
		{Name: "raw-cas", New: raw(leases(b, cfg("raw-cas")))},
		{Name: "leasehold", New: benchcycle.Store(st, ttl)},
		{Name: "leaderelection", New: elector(leases(b, cfg("leaderelection")))},
		{Name: "lh-client", New: benchcycle.Client(lc, ttl)},
	}
}

// leases returns a client-go coordination/v1 client on cfg, its idle
// connections closed when b ends.
func leases(b *testing.B, cfg *rest.Config) *coordv1.CoordinationV1Client {
	c, err := coordv1.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if hc := c.RESTClient().(*rest.RESTClient).Client; hc != nil {
			hc.CloseIdleConnections()
		}
	})
	return c
}

// leaseName is a peer's Lease for key: the key with "." for "/" (the
// benchmarks' keys are lower-case words, numbers and slashes).
func leaseName(key string) string { return "peer." + strings.ReplaceAll(key, "/", ".") }

// raw is the floor, the loop a user would write with client-go alone: take
// the key's Lease with an Update that sets holderIdentity, the duration
// and the times on the resourceVersion last seen (a compare-and-swap), then
// free it with an Update that clears them on the resourceVersion the take
// returned. The Lease is created (or read) once, before the timing. A take
// that loses its compare-and-swap reads the Lease again and returns
// benchcycle.ErrHeld, as does a Lease another holds.
func raw(c coordv1.LeasesGetter) func(*testing.B, string, bool) (benchcycle.Cycle, func()) {
	return func(b *testing.B, key string, _ bool) (benchcycle.Cycle, func()) {
		lc := c.Leases(namespace)
		cur := ensureLease(b, lc, leaseName(key))
		id, secs := key, int32(ttl/time.Second)
		return func(ctx context.Context) error {
			if h := cur.Spec.HolderIdentity; h != nil && *h != "" {
				return reread(ctx, lc, &cur)
			}
			take := cur.DeepCopy()
			now := metav1.NewMicroTime(time.Now())
			take.Spec.HolderIdentity, take.Spec.LeaseDurationSeconds = &id, &secs
			take.Spec.AcquireTime, take.Spec.RenewTime = &now, &now
			held, err := lc.Update(ctx, take, metav1.UpdateOptions{})
			if apierrors.IsConflict(err) {
				return reread(ctx, lc, &cur)
			}
			if err != nil {
				return err
			}
			free := held.DeepCopy()
			free.Spec.HolderIdentity, free.Spec.AcquireTime, free.Spec.RenewTime = nil, nil, nil
			if cur, err = lc.Update(ctx, free, metav1.UpdateOptions{}); err != nil {
				return err
			}
			return nil
		}, nil
	}
}

// reread reads the Lease into *cur and returns benchcycle.ErrHeld.
func reread(ctx context.Context, lc coordv1.LeaseInterface, cur **coordinationv1.Lease) error {
	l, err := lc.Get(ctx, (*cur).Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	*cur = l
	return benchcycle.ErrHeld
}

// ensureLease creates the Lease name, free, or reads it if it exists.
func ensureLease(b *testing.B, lc coordv1.LeaseInterface, name string) *coordinationv1.Lease {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := lc.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		l, err = lc.Get(ctx, name, metav1.GetOptions{})
	}
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// elector is the peer, client-go's leaderelection as a controller uses it,
// one LeaderElector per cycle over a LeaseLock on the key's Lease, with
// the worker's identity: Run until OnStartedLeading, which cancels Run's
// context; with ReleaseOnCancel, Run then releases the Lease (a Get and an
// Update) before it returns. LeaseDuration is the TTL, RenewDeadline half
// of it, and RetryPeriod the smallest it may be (1 ns), so that no timer of
// the elector's waits: its first try to acquire is immediate, and so is the
// first renewal that Run starts at once after it leads (sent unless the
// cancel comes first, and cancelled if in flight). Its log (two lines per
// cycle at the default verbosity) is discarded through Run's context.
func elector(c coordv1.LeasesGetter) func(*testing.B, string, bool) (benchcycle.Cycle, func()) {
	return func(_ *testing.B, key string, _ bool) (benchcycle.Cycle, func()) {
		lock := resourcelock.LeaseLock{LeaseMeta: metav1.ObjectMeta{Namespace: namespace, Name: leaseName(key)},
			Client: c, LockConfig: resourcelock.ResourceLockConfig{Identity: key}}
		return func(ctx context.Context) error {
			ctx, cancel := context.WithCancel(klog.NewContext(ctx, logr.Discard()))
			defer cancel()
			var led atomic.Bool
			l := lock // a LeaseLock caches the Lease it last read: one per elector
			le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
				Lock: &l, LeaseDuration: ttl, RenewDeadline: ttl / 2, RetryPeriod: time.Nanosecond,
				ReleaseOnCancel: true, Name: "bench",
				Callbacks: leaderelection.LeaderCallbacks{
					OnStartedLeading: func(context.Context) { led.Store(true); cancel() },
					OnStoppedLeading: func() {},
				},
			})
			if err != nil {
				return err
			}
			le.Run(ctx)
			switch {
			case !led.Load():
				return fmt.Errorf("leaderelection: Run returned without leading: %w", errors.Join(ctx.Err(), context.Cause(ctx)))
			case le.GetLeader() == key:
				return errors.New("leaderelection: the release did not land (the Lease is still ours)")
			}
			return nil
		}, nil
	}
}
