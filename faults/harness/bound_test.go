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
