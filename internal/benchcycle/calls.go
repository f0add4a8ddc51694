package benchcycle

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/internal/callcount"
)

// Calls counts the requests of 200 x b.N cycles of each implementation,
// one goroutine on a key of its own, after a warm-up cycle (the key's
// objects exist, released), and reports them per cycle by kind
// (KIND/cycle) and in all (requests/cycle). Every implementation sends
// its requests through c.
func Calls(b *testing.B, c *callcount.Counter, impls []Impl) {
	for _, im := range impls {
		b.Run(im.Name, func(b *testing.B) {
			cycle, _ := im.New(b, fmt.Sprintf("calls-%d-%s", time.Now().UnixNano(), im.Name), false)
			ctx := context.Background()
			if err := RunCycles(ctx, cycle, 1); err != nil {
				b.Fatal(err)
			}
			c.Take()
			n := 200 * b.N
			if err := RunCycles(ctx, cycle, n); err != nil {
				b.Fatal(err)
			}
			total, counts := c.Take()
			for _, k := range slices.Sorted(maps.Keys(counts)) {
				b.ReportMetric(float64(counts[k])/float64(n), k+"/cycle")
			}
			b.ReportMetric(float64(total)/float64(n), "requests/cycle")
		})
	}
}

// RunCycles runs n cycles of c, each tried again while it returns ErrHeld.
func RunCycles(ctx context.Context, c Cycle, n int) error {
	for range n {
		for {
			err := c(ctx)
			if err == nil {
				break
			}
			if !errors.Is(err, ErrHeld) {
				return err
			}
		}
	}
	return nil
}
