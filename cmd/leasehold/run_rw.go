package main

import (
	"context"
	"flag"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/rwlock"
)

// rwFlags defines run's --read and --write.
func rwFlags(fs *flag.FlagSet) (read, write *bool) {
	read = fs.Bool("read", false, "take KEY's read-write lock for reading, shared with other readers")
	write = fs.Bool("write", false, "take KEY's read-write lock for writing, alone")
	return read, write
}

// checkMode sets f.mode from --read and --write.
func (f *runFlags) checkMode(read, write bool) error {
	switch {
	case read && write:
		return usagef("--read and --write exclude each other")
	case (read || write) && f.slots != 0:
		return usagef("--slots takes a semaphore, --read and --write a read-write lock: give one of them")
	case read:
		f.mode = rwlock.Read
	case write:
		f.mode = rwlock.Write
	}
	return nil
}

// lockRW takes f.key's read-write lock in f.mode, and returns the lease the
// hold lives by (a reader's slot, the writer's gate) and its write epoch.
func lockRW(ctx context.Context, c *leasehold.Client, f runFlags) (*leasehold.Lease, uint64, error) {
	l, err := rwlock.New(c, f.key, &rwlock.Options{TTL: f.ttl})
	if err != nil {
		return nil, 0, err
	}
	lock := l.RLock
	if f.mode == rwlock.Write {
		lock = l.Lock
	}
	h, err := lock(ctx, f.wait)
	if err != nil {
		return nil, 0, err
	}
	return h.Lease(), h.Epoch(), nil
}
