package gocron_test

import (
	"context"
	"fmt"
	"log"
	"time"

	gocronv2 "github.com/go-co-op/gocron/v2"

	"github.com/leasehold-go/leasehold"
	lhgocron "github.com/leasehold-go/leasehold/gocron"
	"github.com/leasehold-go/leasehold/memory"
)

// Every node runs the same scheduler; the Locker lets one of them run
// each tick of the job, and Guard cancels the job if its lease is lost.
// (A real deployment shares a store between the nodes: sqlite on one host,
// PostgreSQL, Redis, etcd... across hosts.)
func ExampleLocker() {
	c, err := leasehold.New(memory.New(nil), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	lk, err := lhgocron.NewLocker(c, &lhgocron.LockerOptions{Period: time.Second})
	if err != nil {
		log.Fatal(err)
	}
	s, err := gocronv2.NewScheduler(gocronv2.WithDistributedLocker(lk))
	if err != nil {
		log.Fatal(err)
	}
	done := make(chan struct{})
	job := lk.Guard(func(ctx context.Context) error {
		// ctx ends if the lease is lost; its token fences the job's writes.
		l := lhgocron.LeaseFrom(ctx)
		fmt.Println("token", l.Token())
		close(done)
		return nil
	})
	if _, err := s.NewJob(gocronv2.OneTimeJob(gocronv2.OneTimeJobStartImmediately()), gocronv2.NewTask(job),
		gocronv2.WithName("report")); err != nil {
		log.Fatal(err)
	}
	s.Start()
	<-done
	_ = s.Shutdown()
	// Output: token 1
}
