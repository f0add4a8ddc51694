package leasetest

import (
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

// RWLocker and RWHold are the read-write lock the rules drive, for the
// sensitivity tests' broken locks.
type (
	RWLocker = rwLocker
	RWHold   = rwHold
)

// NewRWLock is the suite's own read-write lock.
var NewRWLock = newRWLock

// RunRWRules runs the read-write lock rules over cfg with the lock newRW
// makes, so a sensitivity test can hand them a broken lock.
func RunRWRules(t *testing.T, cfg Config, newRW func(c *leasehold.Client, key string, ttl time.Duration) (RWLocker, error)) {
	s := &suite{cfg: cfg, ttl: 300 * time.Millisecond, newRW: newRW}
	t.Run("rwlock_never_a_reader_with_a_writer", s.rwNeverReaderWithWriter)
	t.Run("rwlock_waiting_writer_gets_in_within_readers_ttl", s.rwWriterGetsIn)
}
