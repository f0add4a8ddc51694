package bench

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// commandCalls returns INFO commandstats' calls per command: the commands
// the server ran, those a script called included, each counted once.
func commandCalls(ctx context.Context, b *testing.B, c *redis.Client) map[string]int64 {
	info, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	calls := map[string]int64{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		for _, f := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(f, "calls="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					b.Fatalf("INFO commandstats %s: %v", name, err)
				}
				calls[strings.TrimPrefix(name, "cmdstat_")] = n
			}
		}
	}
	return calls
}

// perCycle turns two commandCalls readings n cycles apart into calls per
// cycle, rounded to 0.01, without the INFO that took the second reading;
// "total" sums them.
func perCycle(before, after map[string]int64, n int) map[string]float64 {
	out := map[string]float64{}
	total := 0.0
	for name, a := range after {
		d := a - before[name]
		if name == "info" {
			d--
		}
		if d <= 0 {
			continue
		}
		v := math.Round(float64(d)/float64(n)*100) / 100
		if v == 0 {
			continue
		}
		out[name] = v
		total += v
	}
	out["total"] = total
	return out
}

// formatCalls prints calls per cycle as "total=5 evalsha=2 get=1 ...".
func formatCalls(calls map[string]float64) string {
	var names []string
	for n := range calls {
		if n != "total" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	r := func(v float64) float64 { return math.Round(v*100) / 100 }
	s := fmt.Sprintf("total=%g", r(calls["total"]))
	for _, n := range names {
		s += fmt.Sprintf(" %s=%g", n, r(calls[n]))
	}
	return s
}
