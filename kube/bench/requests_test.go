package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/internal/benchcycle"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordv1 "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
)

// sent is one request as the client's transport saw it: the bytes sent
// and answered, and the time from sending to the answer's headers.
type sent struct {
	up, down int64
	took     time.Duration
}

// recorder keeps the requests of the implementation being measured (cur;
// none while it is "").
type recorder struct {
	mu   sync.Mutex
	cur  string
	reqs map[string][]*sent
}

func (r *recorder) measure(impl string) {
	r.mu.Lock()
	r.cur = impl
	r.mu.Unlock()
}

func (r *recorder) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		s := &sent{up: req.ContentLength}
		t0 := time.Now()
		resp, err := rt.RoundTrip(req)
		s.took = time.Since(t0)
		r.mu.Lock()
		if r.cur != "" {
			r.reqs[r.cur] = append(r.reqs[r.cur], s)
		}
		r.mu.Unlock()
		if resp != nil {
			resp.Body = &countedBody{ReadCloser: resp.Body, n: &s.down}
		}
		return resp, err
	})
}

// countedBody counts the bytes read into *n (read after the request is
// recorded, before the next cycle's).
type countedBody struct {
	io.ReadCloser
	n *int64
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	*b.n += int64(n)
	return n, err
}

// BenchmarkRequests tells where a cycle's time goes on the server: it runs
// 30 rounds of 20 cycles of raw-cas, raw-record, raw-tracked, leasehold
// and lh-client in turn, one goroutine each on a key of its own, and prints for each the
// median over the rounds of a cycle's time; the CPU per cycle of this
// process, of kube-apiserver and of etcd (rusage and /proc, summed over
// the rounds: the figures a loaded machine moves least); and per request
// of the cycle (take, free) the median time to the answer's headers and
// the mean bytes sent and answered. raw-record is the floor writing the
// store's metadata (its label and annotations, of the same sizes) on a
// Lease of its own, so that leasehold's gap to it is the store's own and
// raw-record's to raw-cas the record's; raw-tracked is raw-record on a
// Lease whose managedFields the apiserver keeps (as it did the store's
// until its writes reset them), and its gap to raw-record is the field
// management's cost. From this folder:
//
//	GOWORK=off go test -run '^$' -bench Requests -benchtime 1x .
func BenchmarkRequests(b *testing.B) {
	rec := &recorder{reqs: map[string][]*sent{}}
	cfg := func(string) *rest.Config {
		c := config()
		c.WrapTransport = rec.wrap
		return c
	}
	ims := slices.DeleteFunc(impls(b, cfg), func(im benchcycle.Impl) bool { return im.Name == "leaderelection" })
	ims = slices.Insert(ims, 1, benchcycle.Impl{Name: "raw-record", New: rawRecord(leases(b, cfg("raw-record")), false)},
		benchcycle.Impl{Name: "raw-tracked", New: rawRecord(leases(b, cfg("raw-tracked")), true)})
	ctx := context.Background()
	cycles := make([]benchcycle.Cycle, len(ims))
	for i, im := range ims {
		cycles[i], _ = im.New(b, fmt.Sprintf("requests/%d/%s", time.Now().UnixNano(), im.Name), false)
		if err := runCycles(ctx, cycles[i], 1); err != nil {
			b.Fatal(err)
		}
	}
	const rounds, per = 30, 20
	times := make([][]time.Duration, len(ims))
	cpu := make([][3]time.Duration, len(ims))
	for range b.N * rounds {
		for i, im := range ims {
			rec.measure(im.Name)
			c0, t0 := cpus(), time.Now()
			if err := runCycles(ctx, cycles[i], per); err != nil {
				b.Fatal(err)
			}
			times[i] = append(times[i], time.Since(t0)/per)
			c1 := cpus()
			rec.measure("")
			for k := range c1 {
				cpu[i][k] += c1[k] - c0[k]
			}
		}
	}
	n := time.Duration(b.N * rounds * per)
	fmt.Println("implementation  cycle(median)  cpu/cycle: self apiserver etcd  take: ms B-sent B-answered  free: ms B-sent B-answered")
	for i, im := range ims {
		fmt.Printf("%-14s  %7.3f ms     %6.0f µs %6.0f µs %6.0f µs  %s  %s\n", im.Name, ms(median(times[i])),
			us(cpu[i][0]/n), us(cpu[i][1]/n), us(cpu[i][2]/n), perRequest(rec.reqs[im.Name], 0), perRequest(rec.reqs[im.Name], 1))
	}
}

// perRequest sums up the requests at position pos of every 2-request cycle.
func perRequest(reqs []*sent, pos int) string {
	var took []time.Duration
	var up, down int64
	for i := pos; i < len(reqs); i += 2 {
		took = append(took, reqs[i].took)
		up, down = up+reqs[i].up, down+reqs[i].down
	}
	if len(took) == 0 {
		return "-"
	}
	n := int64(len(took))
	return fmt.Sprintf("%.3f %4d %4d", ms(median(took)), up/n, down/n)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// cpus returns the CPU time used so far by this process, kube-apiserver
// and its etcd.
func cpus() [3]time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	self := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return [3]time.Duration{self, procCPU(server.Pid()), procCPU(server.Etcd.Nodes[0].Pid())}
}

// procCPU returns the user and system time of process pid (0 if it cannot
// be read), in the kernel's clock ticks of 10 ms.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	user, _ := strconv.Atoi(f[11])
	sys, _ := strconv.Atoi(f[12])
	return time.Duration(user+sys) * 10 * time.Millisecond
}

// rawRecord is raw's loop writing the store's metadata too: the take sets
// the store's label and the annotations of a held record (as many, of the
// same sizes), the free those of a released one. With tracked, the Lease
// is given a field manager first, so that the apiserver manages its fields
// on every write (ensureLease's Lease, created empty, has none, and an
// update of a Lease without any does not start them).
func rawRecord(c coordv1.LeasesGetter, tracked bool) func(*testing.B, string, bool) (benchcycle.Cycle, func()) {
	return func(b *testing.B, key string, _ bool) (benchcycle.Cycle, func()) {
		lc := c.Leases(namespace)
		cur := ensureLease(b, lc, leaseName(key))
		if tracked {
			cur.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "bench", Operation: metav1.ManagedFieldsOperationUpdate,
				APIVersion: "coordination.k8s.io/v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{}}`)}}
			var err error
			if cur, err = lc.Update(context.Background(), cur, metav1.UpdateOptions{}); err != nil || len(cur.ManagedFields) == 0 {
				b.Fatalf("raw-tracked: the Lease is not tracked (%v)", err)
			}
		}
		id, secs, transitions, tok := key, int32(ttl/time.Second), int32(0), uint64(0)
		const p = "leasehold-go.github.io/"
		meta := func(l *metav1.ObjectMeta, held bool) {
			tok++
			l.Labels = map[string]string{"app.kubernetes.io/managed-by": "leasehold"}
			l.Annotations = map[string]string{p + "format": "1", p + "key": key, p + "state": "released",
				p + "token": strconv.FormatUint(tok, 10), p + "write": "0123456789abcdef"}
			if held {
				l.Annotations[p+"state"], l.Annotations[p+"label"] = "held", "bench"
				l.Annotations[p+"owner"], l.Annotations[p+"ttl-ms"] = "0123456789abcdef0123456789abcdef", "10000"
			}
		}
		return func(ctx context.Context) error {
			take := cur.DeepCopy()
			now := metav1.NewMicroTime(time.Now())
			meta(&take.ObjectMeta, true)
			take.Spec.HolderIdentity, take.Spec.LeaseDurationSeconds = &id, &secs
			take.Spec.AcquireTime, take.Spec.RenewTime, take.Spec.LeaseTransitions = &now, &now, &transitions
			held, err := lc.Update(ctx, take, metav1.UpdateOptions{})
			if err != nil {
				return err
			}
			free := held.DeepCopy()
			meta(&free.ObjectMeta, false)
			free.Spec.HolderIdentity, free.Spec.AcquireTime, free.Spec.RenewTime = nil, nil, nil
			cur, err = lc.Update(ctx, free, metav1.UpdateOptions{})
			return err
		}, nil
	}
}
