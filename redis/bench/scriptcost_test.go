package bench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/leasehold-go/leasehold/redis/internal/core"
)

var scriptCostPiped = flag.Bool("scriptcost-pipelined", false, "BenchmarkScriptCost sends each block in two pipelines (the scripts' own cost, without a round trip's system calls) and also measures held attempts")

// scriptBlock is the cycles of one implementation between two readings of
// the server's CPU.
const scriptBlock = 1000

// scriptPair is an acquire and a release script run as the store runs them.
type scriptPair struct{ name, acquire, release string }

// scriptPairs are the store's scripts and the alternatives they were
// measured against (testdata/).
func scriptPairs(b *testing.B) []scriptPair {
	file := func(name string) string {
		src, err := os.ReadFile("testdata/" + name + ".lua")
		if err != nil {
			b.Fatal(err)
		}
		return string(src)
	}
	acq, rel := core.AcquireScript.Src, core.ReleaseScript.Src
	return []scriptPair{
		{"store", acq, rel},
		{"store-before", file("acquire_before"), file("release_before")},
		{"acquire-five-calls", file("acquire_five_calls"), rel},
		{"acquire-nx-get", file("acquire_nx_get"), rel},
		{"release-no-publish", acq, file("release_no_publish")},
		{"set-only+cad", file("acquire_set_only"), cadScript},
	}
}

// BenchmarkScriptCost measures redis-server's main-thread CPU per acquire+release
// cycle of the store's scripts, of alternatives to them and of the raw
// floor, sent straight from go-redis on one connection and interleaved in
// blocks of 1,000 cycles on fresh keys, so that the machine's load drifts
// over all of them alike. One op is one round (a block of each); it prints
// "SCRIPTCOST <name> <µs per cycle> <commands per cycle>" and reports the
// store's scripts over the floor. Run it with
//
//	GOWORK=off go test -run '^$' -bench ScriptCost -benchtime 40x [-args -scriptcost-pipelined]
func BenchmarkScriptCost(b *testing.B) {
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 1})
	defer c.Close()
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 1})
	defer admin.Close()
	pairs := scriptPairs(b)
	names := []string{"floor"}
	for _, p := range pairs {
		names = append(names, p.name)
	}
	cpu := make([]float64, len(names))
	held := make([]float64, len(names))
	calls := make([]map[string]float64, len(names))
	for i := range calls {
		calls[i] = map[string]float64{}
	}
	rounds := b.N
	for r := range rounds {
		for i, name := range names {
			keys := make([]string, scriptBlock)
			for j := range keys {
				keys[j] = fmt.Sprintf("scriptcost/%s/%d/%d", name, r, j)
			}
			before, cb := mainThreadCPU(ctx, b, admin), commandCalls(ctx, b, admin)
			var h float64
			var err error
			if i == 0 {
				err = floorBlock(ctx, c, keys)
			} else {
				h, err = pairBlock(ctx, b, c, admin, pairs[i-1], keys)
			}
			if err != nil {
				b.Fatalf("%s: %v", name, err)
			}
			cpu[i] += mainThreadCPU(ctx, b, admin) - before - h
			held[i] += h
			for k, v := range perCycle(cb, commandCalls(ctx, b, admin), scriptBlock) {
				calls[i][k] += v / float64(rounds)
			}
		}
	}
	n := float64(rounds * scriptBlock)
	b.ReportMetric(cpu[1]/cpu[0], "store/floor")
	b.ReportMetric(0, "ns/op")
	for i, name := range names {
		line := fmt.Sprintf("SCRIPTCOST %-20s %6.2f µs/cycle %5.2fx floor", name, cpu[i]*1e6/n, cpu[i]/cpu[0])
		if held[i] > 0 {
			line += fmt.Sprintf("  held attempt %5.2f µs", held[i]*1e6/n)
		}
		fmt.Println(line, " ", formatCalls(calls[i]))
	}
}

// floorBlock runs the raw floor's cycle on every key: SET NX PX, then the
// compare-and-delete script.
func floorBlock(ctx context.Context, c *redis.Client, keys []string) error {
	cad := redis.NewScript(cadScript)
	if err := cad.Load(ctx, c).Err(); err != nil {
		return err
	}
	vals := make([]string, len(keys))
	for i := range vals {
		vals[i] = token()
	}
	if !*scriptCostPiped {
		for i, k := range keys {
			if err := c.SetNX(ctx, k, vals[i], ttl).Err(); err != nil {
				return err
			}
			if err := cad.EvalSha(ctx, c, []string{k}, vals[i]).Err(); err != nil {
				return err
			}
		}
		return nil
	}
	if _, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			p.SetNX(ctx, k, vals[i], ttl)
		}
		return nil
	}); err != nil {
		return err
	}
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			p.EvalSha(ctx, cad.Hash(), []string{k}, vals[i])
		}
		return nil
	})
	return err
}

// pairBlock runs p's cycle on every key. Pipelined, it also makes one
// attempt per key by another owner while the key is held, and returns the
// server CPU seconds those took (with their INFO), which the caller keeps
// apart; the commands per cycle include them.
func pairBlock(ctx context.Context, b *testing.B, c, admin *redis.Client, p scriptPair, keys []string) (float64, error) {
	acq, rel := redis.NewScript(p.acquire), redis.NewScript(p.release)
	for _, s := range []*redis.Script{acq, rel} {
		if err := s.Load(ctx, c).Err(); err != nil {
			return 0, err
		}
	}
	ms := strconv.FormatInt(ttl.Milliseconds(), 10)
	lock := func(k string) string { return "lh:{" + k + "}:lock" }
	acquire := func(p redis.Scripter, k, owner string) *redis.Cmd {
		return acq.EvalSha(ctx, p, []string{lock(k), "lh:{" + k + "}:token"}, owner, "bench", ms)
	}
	release := func(p redis.Scripter, k, owner string, a *redis.Cmd) *redis.Cmd {
		tok := grantedToken(a)
		return rel.EvalSha(ctx, p, []string{lock(k)}, owner+tok+":", "lh:{"+k+"}:free")
	}
	owners := make([]string, len(keys))
	for i := range owners {
		o := token()
		owners[i] = strconv.Itoa(len(o)) + ":" + o + ":"
	}
	acqs := make([]*redis.Cmd, len(keys))
	rels := make([]*redis.Cmd, len(keys))
	if !*scriptCostPiped {
		for i, k := range keys {
			acqs[i] = acquire(c, k, owners[i])
			rels[i] = release(c, k, owners[i], acqs[i])
		}
		return 0, released(rels)
	}
	pipe := c.Pipeline()
	for i, k := range keys {
		acqs[i] = acquire(pipe, k, owners[i])
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, err
	}
	before := mainThreadCPU(ctx, b, admin)
	for _, k := range keys {
		acquire(pipe, k, "5:other:")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, err
	}
	held := mainThreadCPU(ctx, b, admin) - before
	for i, k := range keys {
		rels[i] = release(pipe, k, owners[i], acqs[i])
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, err
	}
	return held, released(rels)
}

// released checks that every release released.
func released(rels []*redis.Cmd) error {
	for _, r := range rels {
		if n, err := r.Int(); err != nil || n != 1 {
			return fmt.Errorf("release: %v", r)
		}
	}
	return nil
}

// grantedToken is the token an acquire script's reply grants: the reply
// itself (the store's script), or the second of {1, token} (the scripts it
// replaced, and those of testdata/); "" when it granted none.
func grantedToken(a *redis.Cmd) string {
	if s, err := a.Text(); err == nil {
		return s
	}
	if r, err := a.Slice(); err == nil && len(r) == 2 && r[0] == int64(1) {
		s, _ := r[1].(string)
		return s
	}
	return ""
}
