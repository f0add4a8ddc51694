package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/leasehold-go/leasehold/azblob"
	"github.com/leasehold-go/leasehold/internal/benchcycle"
)

// cpuTime is the CPU time (user + system) process pid has used, from
// /proc/PID/stat, in clock ticks of 10 ms.
func cpuTime(b *testing.B, pid int) time.Duration {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// BenchmarkServerTime reports Azurite's CPU time per cycle of the SDK
// loop, the store and the Client (1,000 x b.N cycles each, one goroutine),
// and per request of the two kinds a cycle is made of: a lease acquire +
// release pair (the floor's cycle) and the store's token write (Set
// Metadata under the lease). CPU time, unlike the rate, hardly depends on
// the machine's load: it says what the server spends on each request.
func BenchmarkServerTime(b *testing.B) {
	pid := azurite.Pid()
	st, err := azblob.OpenConnectionString(azurite.ConnectionString(), "servertime")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	ctx := context.Background()
	if err := st.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	impls := []benchcycle.Impl{
		{Name: "raw-sdk", New: raw(st.Container())},
		{Name: "leasehold", New: benchcycle.Store(st, ttl)},
		{Name: "lh-client", New: benchcycle.Client(benchcycle.NewClient(b, st), ttl)},
		{Name: "setmetadata-under-lease", New: setMetadata(st)},
		{Name: "raw-sdk-again", New: raw(st.Container())},
	}
	for _, im := range impls {
		b.Run(im.Name, func(b *testing.B) {
			cycle, _ := im.New(b, fmt.Sprintf("st-%d-%s", time.Now().UnixNano(), im.Name), false)
			if err := benchcycle.RunCycles(ctx, cycle, 10); err != nil {
				b.Fatal(err)
			}
			n := 1000 * b.N
			before := cpuTime(b, pid)
			if err := benchcycle.RunCycles(ctx, cycle, n); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64((cpuTime(b, pid)-before).Microseconds())/float64(n), "server-µs/cycle")
		})
	}
}

// setMetadata is one Set Metadata under a lease held throughout, as the
// store's token write: the request a store cycle adds to the floor's.
func setMetadata(st *azblob.Store) func(*testing.B, string, bool) (benchcycle.Cycle, func()) {
	return func(b *testing.B, key string, _ bool) (benchcycle.Cycle, func()) {
		bb, lb, id := peerBlob(b, st.Container(), key)
		if _, err := lb.AcquireLease(context.Background(), 60, nil); err != nil {
			b.Fatal(err)
		}
		one, tok := "1", 0
		return func(ctx context.Context) error {
			tok++
			t, label := strconv.Itoa(tok), "bench"
			_, err := bb.SetMetadata(ctx, map[string]*string{"leasehold": &one, "token": &t, "label": &label, "ceiling": &t},
				&blob.SetMetadataOptions{AccessConditions: &blob.AccessConditions{LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: &id}}})
			return err
		}, func() { _, _ = lb.ReleaseLease(context.Background(), nil) }
	}
}
