package bench

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/etcd"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
)

// callCounter counts the gRPC calls a client makes, by method: unary calls,
// streams opened and messages sent on streams.
type callCounter struct {
	mu sync.Mutex
	n  map[string]int64
}

func (c *callCounter) add(what string) {
	c.mu.Lock()
	c.n[what]++
	c.mu.Unlock()
}

func (c *callCounter) snapshot() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

type countedStream struct {
	grpc.ClientStream
	c      *callCounter
	method string
}

func (s *countedStream) SendMsg(m any) error {
	s.c.add("stream-msg " + s.method)
	return s.ClientStream.SendMsg(m)
}

// countingClient returns an etcd client whose gRPC calls cc counts.
func countingClient(b *testing.B, cc *callCounter) *clientv3.Client {
	short := func(m string) string { return m[strings.LastIndexByte(m, '/')+1:] }
	unary := func(ctx context.Context, method string, req, reply any, conn *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		cc.add("unary " + short(method))
		return invoker(ctx, method, req, reply, conn, opts...)
	}
	stream := func(ctx context.Context, desc *grpc.StreamDesc, conn *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		cc.add("stream-open " + short(method))
		s, err := streamer(ctx, desc, conn, method, opts...)
		if err != nil {
			return nil, err
		}
		return &countedStream{ClientStream: s, c: cc, method: short(method)}, nil
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: cluster.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(unary), grpc.WithChainStreamInterceptor(stream)}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cli.Close() })
	return cli
}

// serverMsgs sums grpc_server_msg_received_total by method, and the mvcc
// operation counters, over the cluster's members (from their /metrics).
func serverMsgs(b *testing.B) map[string]float64 {
	out := map[string]float64{}
	for _, ep := range cluster.Endpoints() {
		resp, err := http.Get(ep + "/metrics")
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if m, v, ok := mvccCounter(line); ok {
				out[m] += v
				continue
			}
			if !strings.HasPrefix(line, "grpc_server_msg_received_total{") {
				continue
			}
			i := strings.Index(line, `grpc_method="`)
			j := strings.LastIndexByte(line, ' ')
			if i < 0 || j < 0 {
				continue
			}
			m := line[i+len(`grpc_method="`):]
			m = m[:strings.IndexByte(m, '"')]
			v, _ := strconv.ParseFloat(line[j+1:], 64)
			out[m] += v
		}
		resp.Body.Close()
	}
	return out
}

// mvccCounter parses a line of an etcd member's mvcc operation counters
// (etcd_mvcc_{range,put,delete,txn}_total: the key-value work the member
// did, compares' reads included), which do not depend on the machine's load.
func mvccCounter(line string) (name string, v float64, ok bool) {
	for _, c := range []string{"range", "put", "delete", "txn"} {
		if p := "etcd_mvcc_" + c + "_total "; strings.HasPrefix(line, p) {
			v, err := strconv.ParseFloat(line[len(p):], 64)
			return "mvcc-" + c + " (3 members)", v, err == nil
		}
	}
	return "", 0, false
}

// procCPU returns the CPU time of this process and of the etcd members.
func procCPU() (self, server time.Duration) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	for _, pid := range cluster.PIDs() {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// Fields after the command's closing parenthesis; utime and stime
		// are the 12th and 13th of them, in clock ticks (100 per second).
		s := string(data)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 12 {
			u, _ := strconv.ParseInt(f[11], 10, 64)
			k, _ := strconv.ParseInt(f[12], 10, 64)
			server += time.Duration(u+k) * 10 * time.Millisecond
		}
	}
	return self, server
}

// goroutinesCreated returns how many goroutines this process has started.
func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

func revision(b *testing.B, cli *clientv3.Client) int64 {
	r, err := cli.Get(context.Background(), "bench/revision-probe")
	if err != nil {
		b.Fatal(err)
	}
	return r.Header.Revision
}

// BenchmarkCalls counts what one acquire+release cycle sends, for the
// Client over the store and for concurrency.Mutex: gRPC calls by method
// (client side) and messages received by the servers by method, revisions
// written, and the CPU of this process and of the etcd members per cycle.
// Each sub-benchmark runs LEASEHOLD_ETCD_CALLS_N cycles (default 3000)
// after a warm-up. Run with -benchtime 1x.
func BenchmarkCalls(b *testing.B) {
	n := 3000
	if v := envInt("LEASEHOLD_ETCD_CALLS_N"); v > 0 {
		n = v
	}
	for _, sc := range []struct {
		name    string
		workers int
		hot     bool
	}{{"distinct-1", 1, false}, {"distinct-8", 8, false}, {"distinct-64", 64, false}, {"hot-8", 8, true}} {
		for _, impl := range []string{"mutex", "client", "store"} {
			b.Run(sc.name+"/"+impl, func(b *testing.B) {
				cc := &callCounter{n: map[string]int64{}}
				cli := countingClient(b, cc)
				var c cycler
				switch impl {
				case "mutex":
					c = mutex
				case "store", "client":
					st := etcd.New(cli, nil)
					b.Cleanup(func() { _ = st.Close() })
					c = leaseholdStore(st)
					if impl == "client" {
						lc, err := leasehold.New(st, &leasehold.Options{Label: "bench"})
						if err != nil {
							b.Fatal(err)
						}
						b.Cleanup(func() { _ = lc.Close() })
						c = leaseholdClient(lc)
					}
				}
				countCycles(b, cli, cc, c, sc.workers, sc.hot, n)
			})
		}
	}
}

func countCycles(b *testing.B, cli *clientv3.Client, cc *callCounter, c cycler, workers int, hot bool, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	pfx := prefix(b)
	fns := make([]func(context.Context) error, workers)
	for i := range workers {
		k := pfx + fmt.Sprint(i)
		if hot {
			k = pfx + "hot"
		}
		fn, done := c(b, cli, k, hot)
		defer done()
		if err := fn(ctx); err != nil {
			b.Fatal(err)
		}
		fns[i] = fn
	}
	rev0 := revision(b, cli)
	calls0, msgs0 := cc.snapshot(), serverMsgs(b)
	self0, srv0 := procCPU()
	gor0 := goroutinesCreated()
	var next atomic.Int64
	var wg sync.WaitGroup
	var fail atomic.Value
	start := time.Now()
	for _, fn := range fns {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if err := fn(ctx); err != nil {
					fail.CompareAndSwap(nil, err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	self1, srv1 := procCPU()
	gor1 := goroutinesCreated()
	calls1, msgs1 := cc.snapshot(), serverMsgs(b)
	rev1 := revision(b, cli)
	if err, _ := fail.Load().(error); err != nil {
		b.Fatal(err)
	}
	per := func(d float64) float64 { return d / float64(n) }
	var lines []string
	for k, v := range calls1 {
		if d := v - calls0[k]; d > 0 {
			lines = append(lines, fmt.Sprintf("client %-40s %.3f", k, per(float64(d))))
		}
	}
	for k, v := range msgs1 {
		if d := v - msgs0[k]; d > 0 {
			lines = append(lines, fmt.Sprintf("server-msgs %-35s %.3f", k, per(d)))
		}
	}
	slices.Sort(lines)
	fmt.Printf("CALLS %s cycles=%d rate=%.0f/s\n", b.Name(), n, float64(n)/elapsed.Seconds())
	for _, l := range lines {
		fmt.Printf("  %s\n", l)
	}
	fmt.Printf("  revisions/cycle %.3f\n", per(float64(rev1-rev0)))
	fmt.Printf("  goroutines started/cycle %.3f\n", per(float64(gor1-gor0)))
	b.ReportMetric(per(float64((self1 - self0).Microseconds())), "client-cpu-us/cycle")
	b.ReportMetric(per(float64((srv1 - srv0).Microseconds())), "server-cpu-us/cycle")
	b.ReportMetric(float64(n)/elapsed.Seconds(), "cycles/s")
}
