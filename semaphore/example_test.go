package semaphore_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
	"github.com/leasehold-go/leasehold/semaphore"
)

// Two slots: two holders get in, the third is told the semaphore is full
// (an error matching leasehold.ErrHeld), and gets a slot once one is
// released.
func Example() {
	ctx := context.Background()
	c, _ := leasehold.New(memory.New(nil), nil)
	defer c.Close()
	s, _ := semaphore.New(c, 2, nil)

	a, _ := s.Acquire(ctx, "encoders", leasehold.AcquireOptions{})
	b, _ := s.Acquire(ctx, "encoders", leasehold.AcquireOptions{})
	fmt.Println("two holders on distinct slots:", a.Slot() != b.Slot())

	_, err := s.Acquire(ctx, "encoders", leasehold.AcquireOptions{})
	fmt.Println("third refused:", errors.Is(err, leasehold.ErrHeld))

	_ = a.Release(ctx)
	p, _ := s.Acquire(ctx, "encoders", leasehold.AcquireOptions{Wait: leasehold.WaitForever})
	fmt.Println("third got the released slot:", p.Slot() == a.Slot(), "with a higher token:", p.Token() > a.Token())
	// Output:
	// two holders on distinct slots: true
	// third refused: true
	// third got the released slot: true with a higher token: true
}

// A resource guarded by a semaphore fences by slot: each slot key has its
// own token sequence, so the resource remembers the highest token per
// Permit.Key(), never one for the whole semaphore.
func ExamplePermit_Key() {
	ctx := context.Background()
	c, _ := leasehold.New(memory.New(nil), nil)
	defer c.Close()
	s, _ := semaphore.New(c, 1, nil)
	p, _ := s.Acquire(ctx, "encoders", leasehold.AcquireOptions{})
	defer p.Release(ctx)
	fmt.Println(p.Key(), p.Slot(), p.Token())
	// Output: encoders/slot/0 0 1
}
