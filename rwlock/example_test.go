package rwlock_test

import (
	"context"
	"fmt"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
	"github.com/leasehold-go/leasehold/rwlock"
)

// Readers share the lock; a writer waits for them and then holds it alone.
// The resource checks each holder's sequencer with a Guard, so a reader
// whose hold ended before the writer came is refused.
func Example() {
	ctx := context.Background()
	c, err := leasehold.New(memory.New(nil), nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	l, err := rwlock.New(c, "reports", nil)
	if err != nil {
		panic(err)
	}
	var guard rwlock.Guard // lives with the resource

	r1, _ := l.RLock(ctx, 0)
	r2, _ := l.RLock(ctx, 0)
	fmt.Println("two readers:", guard.Check(r1.Sequencer()) == nil, guard.Check(r2.Sequencer()) == nil)

	_, err = l.Lock(ctx, 0)
	fmt.Println("writer while reading:", err != nil)

	r1.Release(ctx)
	r2.Release(ctx)
	w, err := l.Lock(ctx, leasehold.WaitForever)
	if err != nil {
		panic(err)
	}
	fmt.Println("writer:", guard.Check(w.Sequencer()) == nil, w.Mode())
	fmt.Println("a late reader refused:", guard.Check(r1.Sequencer()) != nil)
	w.Release(ctx)
	// Output:
	// two readers: true true
	// writer while reading: true
	// writer: true write
	// a late reader refused: true
}

// A hold's context ends when its lease does: do the work under it.
func ExampleLock_RLock() {
	ctx := context.Background()
	c, err := leasehold.New(memory.New(nil), nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	l, err := rwlock.New(c, "reports", &rwlock.Options{Readers: 4})
	if err != nil {
		panic(err)
	}
	h, err := l.RLock(ctx, leasehold.WaitForever)
	if err != nil {
		panic(err)
	}
	defer h.Release(ctx)
	select {
	case <-h.Done():
		fmt.Println("lost:", h.Err())
	default:
		fmt.Println("reading with", h.Sequencer().Mode)
	}
	// Output: reading with read
}
