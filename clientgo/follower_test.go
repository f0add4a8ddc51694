package clientgo_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/leaderelection"
	rl "k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/leasehold-go/leasehold/clientgo"
	"github.com/leasehold-go/leasehold/memory"
)

// countingLock counts the Updates of the lock it wraps that were refused
// with a Conflict.
type countingLock struct {
	*clientgo.Lock
	conflicts atomic.Int64
}

func (c *countingLock) Update(ctx context.Context, ler rl.LeaderElectionRecord) error {
	err := c.Lock.Update(ctx, ler)
	if apierrors.IsConflict(err) {
		c.conflicts.Add(1)
	}
	return err
}

// While the leader lives, a follower running client-go's elector never
// tries to take the key over: Get's raw record changes with every read
// (it carries the time left by the store's clock), so client-go never
// counts the lease as expired while the store says it is held. (With a
// raw record that stayed the same between the leader's renewals, the
// follower tried an Update every RetryPeriod once LeaseDuration had
// passed, each refused with a Conflict.)
func TestFollowerWaitsForTheStore(t *testing.T) {
	st := memory.New(nil)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	led := make(chan struct{})
	leader, err := clientgo.New(st, electKey, "leader", nil)
	if err != nil {
		t.Fatal(err)
	}
	wg.Go(func() { elect(ctx, leader, func() { close(led) }) })
	select {
	case <-led:
	case <-time.After(limit):
		t.Fatal("the leader did not lead")
	}
	lk, err := clientgo.New(st, electKey, "follower", nil)
	if err != nil {
		t.Fatal(err)
	}
	follower := &countingLock{Lock: lk}
	followed := make(chan struct{})
	wg.Go(func() { elect(ctx, follower, func() { close(followed) }) })
	time.Sleep(3 * leaseDuration)
	select {
	case <-followed:
		t.Fatal("the follower led while the leader lived")
	default:
	}
	if n := follower.conflicts.Load(); n != 0 {
		t.Errorf("the follower's Update was refused %d times while the leader lived", n)
	}
}

// elect runs client-go's elector on lock until ctx ends, calling started
// when it leads.
func elect(ctx context.Context, lock rl.Interface, started func()) {
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock:          lock,
		LeaseDuration: leaseDuration,
		RenewDeadline: renewDeadline,
		RetryPeriod:   retryPeriod,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { started() },
			OnStoppedLeading: func() {},
		},
	})
}
