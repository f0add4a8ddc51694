package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/history"
	"github.com/leasehold-go/leasehold/memory"
)

// zkDown is the error the zookeeper store gave the final probe of seed
// 8201 (docs/safety.md) while no member answered.
func zkDown() error {
	return &leasehold.StoreError{Store: "zookeeper", Op: "acquire",
		Err: fmt.Errorf("/leasehold/k5: no ZooKeeper server reachable at 10.77.0.1:40539: %w", zk.ErrNoServer)}
}

func TestClassifyProbe(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want probeOutcome
	}{
		{"granted", nil, probeGranted},
		{"held", fmt.Errorf("acquire: %w", &leasehold.HeldError{Key: "k5", Token: 7}), probeHeld},
		{"zookeeper: no server", zkDown(), probeDown},
		{"zookeeper: connection closed", &leasehold.StoreError{Store: "zookeeper", Op: "acquire", Err: zk.ErrConnectionClosed}, probeDown},
		{"dial refused", &leasehold.StoreError{Store: "redis", Op: "acquire", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}, probeDown},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), probeDown},
		{"http transport", &leasehold.StoreError{Store: "s3", Op: "acquire", Err: &url.Error{Op: "Put", URL: "http://x", Err: io.EOF}}, probeDown},
		{"eof", fmt.Errorf("pgwire: %w", io.ErrUnexpectedEOF), probeDown},
		{"request timed out", &leasehold.StoreError{Store: "etcd", Op: "acquire", Err: context.DeadlineExceeded}, probeDown},
		{"grpc unavailable", &leasehold.StoreError{Store: "etcd", Op: "acquire", Err: errors.New("rpc error: code = Unavailable desc = connection error")}, probeDown},
		{"foreign record", &leasehold.StoreError{Store: "redis", Op: "acquire", Err: &leasehold.ForeignRecordError{Object: "k5", Reason: "bad"}}, probeFailed},
		{"tokens exhausted", &leasehold.StoreError{Store: "sqlite", Op: "acquire", Err: leasehold.ErrTokensExhausted}, probeFailed},
		{"not held", leasehold.ErrNotHeld, probeFailed},
	} {
		if got := classifyProbe(tc.err); got != tc.want {
			t.Errorf("%s: classifyProbe(%v) = %d, want %d", tc.name, tc.err, got, tc.want)
		}
	}
}

// probeDouble is a memory store whose Acquire fails with fail's error for
// its first down calls (down < 0: every call); a double of the store is
// enough for the probe's own logic.
type probeDouble struct {
	leasehold.Store
	down  int64
	calls atomic.Int64
	fail  func() error
}

func (d *probeDouble) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	if n := d.calls.Add(1); d.down < 0 || n <= d.down {
		return leasehold.Grant{}, d.fail()
	}
	return d.Store.Acquire(ctx, req)
}

// probeWith runs the final probe (takeover bound 0: each key's wait is
// TTL + 1 s = 1.1 s) against d, with the given grace.
func probeWith(t *testing.T, d *probeDouble, grace time.Duration) map[string]error {
	t.Helper()
	d.Store = memory.New(nil)
	h := &harness{ctx: context.Background(), rec: history.NewMemRecorder("harness", nil), url: "double://", probeGrace: grace,
		cfg: RunConfig{Keys: []string{"k0", "k1"}, TTL: 100 * time.Millisecond,
			Open: func(context.Context, string) (leasehold.Store, error) { return d, nil }}}
	return h.finalProbe(0)
}

// TestFinalProbeStoreDownThenUp: the store does not answer for the first
// 400 attempts (at least 400 pauses of 5 ms: 2 s, past the key's 1.1 s
// wait), then grants. The key is free: the probe must say so, not call it
// stuck (it did: "not acquired within 1.1s after every holder died").
func TestFinalProbeStoreDownThenUp(t *testing.T) {
	d := &probeDouble{down: 400, fail: zkDown}
	for k, err := range probeWith(t, d, time.Hour) {
		if err != nil {
			t.Errorf("%s: %v, want granted once the store answered", k, err)
		}
	}
	if n := d.calls.Load(); n <= 400 {
		t.Errorf("%d acquires, want more than the 400 that failed", n)
	}
}

// TestFinalProbeStoreNeverUp: a store that never answers is reported
// unreachable (check.ErrProbeUnreachable), not a stuck key.
func TestFinalProbeStoreNeverUp(t *testing.T) {
	d := &probeDouble{down: -1, fail: zkDown}
	for k, err := range probeWith(t, d, 300*time.Millisecond) {
		if !errors.Is(err, check.ErrProbeUnreachable) || !strings.Contains(err.Error(), "could not connect to a server") {
			t.Errorf("%s: %v, want %v with the store's error", k, err, check.ErrProbeUnreachable)
		}
	}
}

// TestFinalProbeKeyHeld: a key that stays held is stuck, however long the
// grace for a store that does not answer.
func TestFinalProbeKeyHeld(t *testing.T) {
	d := &probeDouble{down: -1, fail: func() error { return &leasehold.HeldError{Key: "k", Token: 3} }}
	for k, err := range probeWith(t, d, time.Hour) {
		if err == nil || errors.Is(err, check.ErrProbeUnreachable) || !strings.Contains(err.Error(), "not acquired within") {
			t.Errorf("%s: %v, want not acquired within the wait (held)", k, err)
		}
	}
}
