package check_test

import (
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/history"
)

// The events of two S3 runs (versitygw, 3 holders x 8 keys, TTL 1 s) that
// the lease-history check called Illegal while the store had kept its own
// rules, in ms from the runs' starts, with the refusals left out.

const notHeld = "leasehold: not held by this owner"

// s3Run4000K2 is key k2 of s3-run-4000: h1.1's release of its grant was
// sent at 40.223 s, just before F6 partitioned h1.1 (40.347 s to 42.349
// s); its tombstone landed, the reply was lost, and the SDK's retry after
// the heal found h0.1's lease there, so the store answered "not held by
// this owner". h2.2 took the released key in between.
func s3Run4000K2(release [2]int64, partition bool) []history.Event {
	const h11, h22 = "2102733895f522ca8a0d187b79674a73", "6c816212aaaaaaaaaaaaaaaaaaaaaaaa"
	evs := []history.Event{
		acq("h1.1", h11, 1795759239000000, 38727, 39054),
		renew("h1.1", h11, 1795759239000000, 39416, 39480),
		renew("h1.1", h11, 1795759239000000, 39806, 39832),
		failed(renew("h1.1", h11, 1795759239000000, 40183, 40275), "context canceled"),
		failed(rel("h1.1", h11, 1795759239000000, release[0], release[1]), notHeld),
		acq("h2.2", h22, 1795759241000000, 40420, 40624),
		renew("h2.2", h22, 1795759241000000, 40958, 41034),
		rel("h2.2", h22, 1795759241000000, 41199, 41275),
		acq("h0.1", "408a5921aaaaaaaaaaaaaaaaaaaaaaaa", 1795759241000002, 41253, 41435),
	}
	if partition {
		evs = append(evs,
			history.Event{Src: "harness", Kind: history.EvFault, Fault: check.F6, Phase: "on", Target: "h1.1", T: 40347 * ms},
			history.Event{Src: "harness", Kind: history.EvFault, Fault: check.F6, Phase: "off", Target: "h1.1", T: 42349 * ms})
	}
	return evs
}

// s3Run4001K0 is key k0 of s3-run-4001 at its end: h1.4's last renewal
// at 357.562 s, its last event on k0 at 357.758 s (a protected write);
// the harness SIGKILLs every holder, unrecorded, and its final probe
// acquires k0 at 357.906 s: h1.4's release was in flight at the kill.
func s3Run4001K0(prober string) []history.Event {
	const h14 = "583434ca5b2dc171a9ce426b818b4d2e"
	return []history.Event{
		acq("h1.4", h14, 1795759925000001, 356300, 356501),
		renew("h1.4", h14, 1795759925000001, 356842, 356873),
		renew("h1.4", h14, 1795759925000001, 357226, 357256),
		renew("h1.4", h14, 1795759925000001, 357562, 357614),
		{Src: "h1.4", Kind: history.EvFWrite, Key: "k", Owner: h14, Token: 1795759925000001, T0: 357744 * ms, T: 357758 * ms},
		acq(prober, "dc5640c4aaaaaaaaaaaaaaaaaaaaaaaa", 1795759926000000, 357906, 357953),
	}
}

// probeEarly moves the holder's last write after the probe's grant: the
// holder was alive then, so no kill can excuse the grant.
func probeEarly(evs []history.Event) []history.Event {
	for i := range evs {
		if evs[i].Kind == history.EvFWrite {
			evs[i].T0, evs[i].T = 357950*ms, 357960*ms
		}
	}
	return evs
}

func TestLeaseHistoryS3Runs(t *testing.T) {
	cases := []struct {
		name string
		evs  []history.Event
		want string
	}{
		{"not-held release under a partition may have freed (s3-run-4000 k2)", s3Run4000K2([2]int64{40223, 42513}, true), "Ok"},
		{"not-held release with no fault on is trusted", s3Run4000K2([2]int64{40223, 42513}, false), "Illegal"},
		{"not-held release sent after the takeover does not excuse it", s3Run4000K2([2]int64{40700, 42513}, true), "Illegal"},
		{"the final probe after the unrecorded kill (s3-run-4001 k0)", s3Run4001K0("harness"), "Ok"},
		{"another holder's grant there is still an overlap", s3Run4001K0("h2.3"), "Illegal"},
		{"a probe before the holder's last event is still an overlap", probeEarly(s3Run4001K0("harness")), "Illegal"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			evs := append([]history.Event(nil), c.evs...)
			history.Sort(evs)
			if v := check.LeaseHistory(evs, hold, 5*time.Second); v.Result != c.want {
				t.Fatalf("verdict %q, want %q (illegal %v)", v.Result, c.want, v.Illegal)
			}
		})
	}
}
