package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// serverImpls are the implementations whose server time is measured: the
// floor, the store and the Client on go-redis, and the peers.
var serverImpls = []string{"raw-goredis", "leasehold-goredis", "lh-client-goredis", "bsm-redislock", "rueidislock"}

// BenchmarkServerTime measures the CPU time redis-server's main thread
// spends per acquire+release cycle (INFO cpu's used_cpu_user_main_thread +
// used_cpu_sys_main_thread, before and after), on one goroutine and
// distinct keys: the server's work per cycle (reading and parsing the
// requests, running the commands or scripts, writing the replies), not the
// round trips or the client's work. It prints
// "SUMMARY redis-server-us-<impl> <µs>".
func BenchmarkServerTime(b *testing.B) {
	ctx := context.Background()
	admin := goredisClient(b, srv)
	byName := map[string]impl{}
	for _, im := range impls {
		byName[im.name] = im
	}
	for _, name := range serverImpls {
		b.Run(name, func(b *testing.B) {
			try := byName[name].open(b)
			prefix := fmt.Sprintf("bench/server/%s/%d/", name, b.N)
			if err := try(ctx, prefix+"warm"); err != nil {
				b.Fatal(err)
			}
			before := mainThreadCPU(ctx, b, admin)
			callsBefore := commandCalls(ctx, b, admin)
			b.ResetTimer()
			for i := range b.N {
				if err := try(ctx, fmt.Sprintf("%s%d", prefix, i%256)); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			us := (mainThreadCPU(ctx, b, admin) - before) * 1e6 / float64(b.N)
			b.ReportMetric(us, "server-µs/cycle")
			calls := perCycle(callsBefore, commandCalls(ctx, b, admin), b.N)
			b.ReportMetric(calls["total"], "cmds/cycle")
			if b.N > 1 { // not the probing run of one cycle
				fmt.Printf("SUMMARY redis-server-us-%s %.2f\n", name, us)
				fmt.Printf("COMMANDS %s %s\n", name, formatCalls(calls))
			}
		})
	}
}

// serverCPU returns the seconds of CPU redis-server's main thread has used.
func mainThreadCPU(ctx context.Context, b *testing.B, c *redis.Client) float64 {
	info, err := c.Info(ctx, "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var total float64
	seen := 0
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (k == "used_cpu_user_main_thread" || k == "used_cpu_sys_main_thread") {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				b.Fatalf("INFO cpu %s: %v", k, err)
			}
			total += f
			seen++
		}
	}
	if seen != 2 {
		b.Fatalf("INFO cpu has no main-thread CPU times (Redis >= 6.2 needed):\n%s", info)
	}
	return total
}
