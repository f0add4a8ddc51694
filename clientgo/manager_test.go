package clientgo_test

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/clientgo"
)

// noAPIServer is a rest.Config whose server accepts connections only to
// count them: the managers of these tests must never need one.
func noAPIServer(t *testing.T) (*rest.Config, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); <-done })
	return &rest.Config{Host: "http://" + ln.Addr().String()}, &conns
}

// started is what a manager's leader-election Runnable saw when it started.
type started struct {
	id    string
	token uint64
	held  bool
}

// startManager starts a controller-runtime manager electing through a Lock
// on st with identity id, and a Runnable that needs leader election, which
// reports its start (with the lock's term) on starts. It returns the
// function that stops the manager and waits for it.
func startManager(t *testing.T, cfg *rest.Config, st leasehold.Store, id string, starts chan<- started) func() {
	t.Helper()
	lock, err := clientgo.New(st, electKey, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	ld, rd, rp := leaseDuration, renewDeadline, retryPeriod
	mgr, err := manager.New(cfg, manager.Options{
		Logger:                              logr.Discard(),
		Metrics:                             metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:              "0",
		LeaderElection:                      true,
		LeaderElectionID:                    "leasehold-test",
		LeaderElectionResourceLockInterface: lock,
		LeaderElectionReleaseOnCancel:       true,
		LeaseDuration:                       &ld,
		RenewDeadline:                       &rd,
		RetryPeriod:                         &rp,
	})
	if err != nil {
		t.Fatalf("manager.New: %v", err)
	}
	// A RunnableFunc needs leader election: the manager starts it only
	// once this candidate leads.
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		tm, ok := lock.Term()
		starts <- started{id: id, token: tm.Token, held: ok}
		<-ctx.Done()
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("%s's manager: %v", id, err)
		}
	}
}

// Two controller-runtime managers elect through Locks on one sqlite file,
// with no Kubernetes API server: the leader's Runnable starts with its
// term held, the other's does not start while the leader runs; the leader's
// manager stops (releasing the key) and the other's Runnable starts, with
// a higher token.
func TestManagerRunsRunnablesOnTheLeaderOnly(t *testing.T) {
	cfg, conns := noAPIServer(t)
	path := filepath.Join(t.TempDir(), "leases.db")
	starts := make(chan started, 2)
	stop := map[string]func(){
		"one": startManager(t, cfg, openStore(t, path), "one", starts),
		"two": startManager(t, cfg, openStore(t, path), "two", starts),
	}
	defer func() {
		for _, s := range stop {
			s()
		}
	}()
	first := waitStart(t, starts)
	if !first.held || first.token == 0 {
		t.Fatalf("%s's Runnable started without a term: %+v", first.id, first)
	}
	time.Sleep(3 * leaseDuration) // the other manager campaigns meanwhile
	select {
	case s := <-starts:
		t.Fatalf("%s's Runnable started (token %d) while %s led (token %d)", s.id, s.token, first.id, first.token)
	default:
	}
	stop[first.id]()
	delete(stop, first.id)
	second := waitStart(t, starts)
	if second.id == first.id || !second.held || second.token <= first.token {
		t.Errorf("after %s stopped (token %d), the Runnable started as %+v", first.id, first.token, second)
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("the managers connected %d times to the API server they were given", n)
	}
}

func waitStart(t *testing.T, starts <-chan started) started {
	t.Helper()
	select {
	case s := <-starts:
		return s
	case <-time.After(limit):
		t.Fatalf("no Runnable started within %s", limit)
		return started{}
	}
}
