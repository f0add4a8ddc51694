package harness_test

import (
	"math"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/harness"
)

func TestEtcdTakeoverBound(t *testing.T) {
	tests := []struct {
		ttl  time.Duration
		want float64 // x TTL
	}{
		{time.Second, 2.6},                   // lease 2 s + 0.5 s check + 0.1 s commits
		{750 * time.Millisecond, 2.6 / 0.75}, // TTL class rounds up to 1 s
		{3 * time.Second, 5.1 / 3},           // lease 4.5 s
	}
	for _, tc := range tests {
		if got := new(harness.Etcd).TakeoverBound(tc.ttl); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("TakeoverBound(%s) = %.4f x TTL, want %.4f", tc.ttl, got, tc.want)
		}
	}
}

func TestZooKeeperTakeoverBound(t *testing.T) {
	tests := []struct {
		ttl  time.Duration
		want float64 // x TTL
	}{
		{time.Second, 2.25},                   // session 2 s + 0.1 s tick + 0.05 s relay + 0.1 s commits
		{750 * time.Millisecond, 1.85 / 0.75}, // TTL class rounds up to 0.8 s: session 1.6 s
		{3 * time.Second, 6.25 / 3},           // session 6 s
	}
	for _, tc := range tests {
		if got := new(harness.ZooKeeper).TakeoverBound(tc.ttl); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("TakeoverBound(%s) = %.4f x TTL, want %.4f", tc.ttl, got, tc.want)
		}
	}
}

func TestConsulTakeoverBound(t *testing.T) {
	tests := []struct {
		ttl  time.Duration
		want float64 // x TTL
	}{
		{time.Second, 21.2},                     // 2 x the 10 s session + 1 s lock-delay + 0.1 s backoff + 0.1 s commits
		{750 * time.Millisecond, 21.175 / 0.75}, // class 1 s; backoff 75 ms
		{10 * time.Second, 41.1 / 10},           // 2 x the 15 s session + 10 s lock-delay + 1 s backoff + 0.1 s
		{90 * time.Second, 339.1 / 90},          // 2 x the 135 s session + the lock-delay cap, 60 s + 9 s backoff + 0.1 s
	}
	for _, tc := range tests {
		if got := new(harness.Consul).TakeoverBound(tc.ttl); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("TakeoverBound(%s) = %.4f x TTL, want %.4f", tc.ttl, got, tc.want)
		}
	}
}

func TestS3TakeoverBound(t *testing.T) {
	tests := []struct {
		ttl  time.Duration
		want float64 // x TTL
	}{
		{time.Second, 1 + 2 + 1.0/3 + 0.1},                   // whole-second TTL: TTL + 2 s + a poll + the acquire
		{1500 * time.Millisecond, (2 + 2 + 0.5 + 0.1) / 1.5}, // the TTL rounds up to 2 s
		{10 * time.Second, (10 + 2 + 10.0/3 + 0.1) / 10},     // the rounding weighs less
	}
	for _, tc := range tests {
		if got := new(harness.S3).TakeoverBound(tc.ttl); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("TakeoverBound(%s) = %.4f x TTL, want %.4f", tc.ttl, got, tc.want)
		}
	}
}
