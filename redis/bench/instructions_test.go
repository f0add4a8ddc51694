package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// instrBlock is the keys of one script pair between two readings.
const instrBlock = 500

// BenchmarkInstructions counts the instructions redis-server's main thread
// runs per acquire, held attempt and release of the store's scripts and of
// the alternatives BenchmarkScriptCost measures: a redis-server of its own
// runs under valgrind's callgrind, and callgrind_control reads its
// instruction count around each block of 500 calls sent in one pipeline.
// Unlike CPU time, the count does not depend on the machine's load, so
// small changes to a script show. Each block's keys are taken and freed
// once before the count (the counter key exists, as for a key used
// before). One op is one round; it prints "INSTR <pair> ..." lines. It
// needs valgrind (apt-get install valgrind).
//
//	GOWORK=off go test -run '^$' -bench Instructions -benchtime 2x
func BenchmarkInstructions(b *testing.B) {
	ctx := context.Background()
	c, pid := callgrindRedis(b)
	pairs := scriptPairs(b)
	sums := make([][3]float64, len(pairs))
	for r := range b.N {
		for i, p := range pairs {
			prefix := fmt.Sprintf("instr/%d/%d/%s/", b.N, r, p.name)
			if _, err := instrBlockRun(ctx, c, p, prefix, nil); err != nil {
				b.Fatalf("%s: warm-up: %v", p.name, err)
			}
			ir, err := instrBlockRun(ctx, c, p, prefix, func() float64 { return mainInstructions(b, pid) })
			if err != nil {
				b.Fatalf("%s: %v", p.name, err)
			}
			for j := range ir {
				sums[i][j] += ir[j] / instrBlock / float64(b.N)
			}
		}
	}
	b.ReportMetric(0, "ns/op")
	for i, p := range pairs {
		s := sums[i]
		fmt.Printf("INSTR %-20s acquire %6.0f  held attempt %6.0f  release %6.0f  cycle %6.0f\n", p.name, s[0], s[1], s[2], s[0]+s[2])
	}
}

// instrBlockRun takes and frees every key under prefix with p's scripts,
// one pipeline per step: acquires, held attempts by another owner,
// releases. With read, it returns the instructions each step took.
func instrBlockRun(ctx context.Context, c *redis.Client, p scriptPair, prefix string, read func() float64) ([3]float64, error) {
	var ir [3]float64
	acq, rel := redis.NewScript(p.acquire), redis.NewScript(p.release)
	for _, s := range []*redis.Script{acq, rel} {
		if err := s.Load(ctx, c).Err(); err != nil {
			return ir, err
		}
	}
	keys := func(i int) []string {
		k := prefix + strconv.Itoa(i)
		return []string{"lh:{" + k + "}:lock", "lh:{" + k + "}:token"}
	}
	owners := make([]string, instrBlock)
	for i := range owners {
		o := token()
		owners[i] = strconv.Itoa(len(o)) + ":" + o + ":"
	}
	acqs := make([]*redis.Cmd, instrBlock)
	step := func(n int, send func(p redis.Pipeliner)) error {
		before := 0.0
		if read != nil {
			before = read()
		}
		pipe := c.Pipeline()
		send(pipe)
		if _, err := pipe.Exec(ctx); err != nil {
			return err
		}
		if read != nil {
			ir[n] = read() - before
		}
		return nil
	}
	err := step(0, func(p redis.Pipeliner) {
		for i := range acqs {
			acqs[i] = acq.EvalSha(ctx, p, keys(i), owners[i], "bench", "30000")
		}
	})
	if err == nil {
		err = step(1, func(p redis.Pipeliner) {
			for i := range acqs {
				acq.EvalSha(ctx, p, keys(i), "5:other:", "bench", "30000")
			}
		})
	}
	rels := make([]*redis.Cmd, instrBlock)
	if err == nil {
		err = step(2, func(p redis.Pipeliner) {
			for i := range rels {
				rels[i] = rel.EvalSha(ctx, p, keys(i)[:1], owners[i]+grantedToken(acqs[i])+":", "lh:{"+prefix+"}:free")
			}
		})
	}
	if err != nil {
		return ir, err
	}
	if err := released(rels); err != nil {
		return ir, fmt.Errorf("%w (acquire: %#v %v)", err, acqs[0].Val(), acqs[0].Err())
	}
	return ir, nil
}

// callgrindRedis starts a redis-server without persistence under
// callgrind, on a Unix socket in a temporary folder, stopped when b ends,
// and returns a client of it and its process id.
func callgrindRedis(b *testing.B) (*redis.Client, string) {
	dir := b.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command("valgrind", "--tool=callgrind", "--callgrind-out-file="+filepath.Join(dir, "callgrind.out"),
		"redis-server", "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatalf("valgrind (apt-get install valgrind): %v", err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	// valgrind slows the server down 50-fold: no read timeout, and no retry
	// of a pipeline whose scripts ran.
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 1, ReadTimeout: -1, MaxRetries: -1})
	b.Cleanup(func() { c.Close() })
	for start := time.Now(); c.Ping(context.Background()).Err() != nil; time.Sleep(100 * time.Millisecond) {
		if time.Since(start) > time.Minute {
			b.Fatal("redis-server under valgrind did not answer in a minute")
		}
	}
	return c, strconv.Itoa(cmd.Process.Pid)
}

var mainThreadIr = regexp.MustCompile(`Th 1\s+([\d,]+)`)

// mainInstructions reads the instructions redis-server's main thread ran
// so far (callgrind_control -e).
func mainInstructions(b *testing.B, pid string) float64 {
	out, err := exec.Command("callgrind_control", "-e", pid).CombinedOutput()
	m := mainThreadIr.FindStringSubmatch(string(out))
	if err != nil || m == nil {
		b.Fatalf("callgrind_control -e %s: %v\n%s", pid, err, out)
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
	if err != nil {
		b.Fatal(err)
	}
	return v
}
