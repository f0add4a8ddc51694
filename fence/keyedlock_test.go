package fence

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
)

// waitUsers waits until key has n holders plus waiters.
func waitUsers(t *testing.T, k *keyedLock, key string, n int) {
	t.Helper()
	for k.users(key) != n {
		runtime.Gosched()
	}
}

func TestKeyedLockExcludes(t *testing.T) {
	var k keyedLock
	ctx := context.Background()
	unlock, err := k.lock(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	// Another key is independent.
	unlockB, err := k.lock(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	unlockB()

	got := make(chan func())
	go func() {
		u, err := k.lock(ctx, "a")
		if err != nil {
			panic(err)
		}
		got <- u
	}()
	waitUsers(t, &k, "a", 2) // the second locker is waiting
	select {
	case <-got:
		t.Fatal("a second locker got a held lock")
	default:
	}
	unlock()
	(<-got)()
	if n := k.users("a"); n != 0 {
		t.Fatalf("users after all unlocks = %d", n)
	}
	if len(k.locks) != 0 {
		t.Fatalf("locks not forgotten: %v", k.locks)
	}
}

func TestKeyedLockCancel(t *testing.T) {
	var k keyedLock
	unlock, err := k.lock(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := k.lock(ctx, "a")
		done <- err
	}()
	waitUsers(t, &k, "a", 2)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("lock with a cancelled context = %v", err)
	}
	if n := k.users("a"); n != 1 {
		t.Fatalf("users = %d after a waiter gave up; want 1", n)
	}
	unlock()
	if len(k.locks) != 0 {
		t.Fatalf("locks not forgotten: %v", k.locks)
	}
}

func TestKeyedLockMutualExclusion(t *testing.T) {
	var k keyedLock
	ctx := context.Background()
	counter := 0 // guarded by the keyed lock only; -race checks it
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				unlock, err := k.lock(ctx, "x")
				if err != nil {
					panic(err)
				}
				counter++
				unlock()
			}
		}()
	}
	wg.Wait()
	if counter != 8*200 {
		t.Fatalf("counter = %d", counter)
	}
	if len(k.locks) != 0 {
		t.Fatalf("locks not forgotten: %v", k.locks)
	}
}
