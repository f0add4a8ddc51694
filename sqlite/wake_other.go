//go:build !linux

package sqlite

import "errors"

// watch would carry releases between processes; this system has none yet
// (kqueue could), so only releases through the same Store wake its waiters
// and waiters in other processes rely on their backoff.
type watch struct{}

func startWatch(*waker) (*watch, error) {
	return nil, errors.New("sqlite: no wake-up between processes on this system")
}

func (*watch) stop() {}

// announce has no listener in another process on this system.
func announce(string, int) {}
