package bench

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/internal/benchcycle"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

// packetsReceived returns the packets the follower every implementation
// talks to has received from clients (mntr's zk_packets_received):
// requests, and the sessions' pings.
func packetsReceived(b *testing.B) int64 {
	n, err := testserver.PacketsReceived(context.Background(), addr)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkRequests counts the requests of 200 x b.N cycles of each
// implementation, one goroutine on a key of its own, after a warm-up
// cycle, as the follower counts the packets it receives (every
// implementation's client talks to it alone; a session's pings, one per
// third of its timeout, add a few), and reports them per cycle: the
// round trips a one-at-a-time cycle waits for, except that the store's
// list and read of a key it has not seen go out at once.
func BenchmarkRequests(b *testing.B) {
	for _, im := range impls(b) {
		b.Run(im.Name, func(b *testing.B) {
			cycle, done := im.New(b, fmt.Sprintf("requests/%d/%s", time.Now().UnixNano(), im.Name), false)
			if done != nil {
				defer done()
			}
			ctx := context.Background()
			run := func(n int) {
				for range n {
					for {
						err := cycle(ctx)
						if err == nil {
							break
						}
						if !errors.Is(err, benchcycle.ErrHeld) {
							b.Fatal(err)
						}
					}
				}
			}
			run(1)
			before := packetsReceived(b)
			n := 200 * b.N
			run(n)
			b.ReportMetric(float64(packetsReceived(b)-before)/float64(n), "requests/cycle")
		})
	}
}
