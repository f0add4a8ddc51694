package clientgo_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"k8s.io/client-go/tools/leaderelection"

	"github.com/leasehold-go/leasehold/clientgo"
	"github.com/leasehold-go/leasehold/memory"
)

// client-go's leader election over a leasehold store: the leader learns
// its epoch (the lease's fencing token) from the lock. (A real deployment
// shares a store between the candidates: PostgreSQL, Redis, etcd... across
// hosts, sqlite on one host.)
func ExampleLock() {
	lock, err := clientgo.New(memory.New(nil), "elect/my-controller", "pod-a", nil)
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   15 * time.Second,
		RenewDeadline:   10 * time.Second,
		RetryPeriod:     2 * time.Second,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				term, _ := lock.Term()
				fmt.Println("leading, epoch", term.Token)
				cancel() // done: resign
			},
			OnStoppedLeading: func() { fmt.Println("stopped leading") },
		},
	})
	// Output:
	// leading, epoch 1
	// stopped leading
}
