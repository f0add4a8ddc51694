package otel_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/fence"
	lhotel "github.com/leasehold-go/leasehold/otel"
	"go.opentelemetry.io/otel/attribute"
)

// waitingAcquireAndLosses: C holds the key while B waits for it; C's
// release wakes B, whose second attempt is granted; B's renewal is refused
// (lost, not_held); D is lost by expiry.
func (r *rig) waitingAcquireAndLosses(lc *lifecycle) {
	t := r.t
	c, sentC := r.acquire("job")
	type result struct {
		l   *leasehold.Lease
		err error
	}
	got := make(chan result, 1)
	go func() {
		l, err := r.client.Acquire(t.Context(), "job", leasehold.AcquireOptions{Wait: time.Minute})
		got <- result{l, err}
	}()
	r.store.await(t, "acquire") // B's first attempt: held
	// B's second attempt, woken by C's release, waits until the release
	// is over, so that each reads the clock when the test knows it.
	open := r.store.holdAcquires()
	lc.heldC = r.release(c, sentC)
	open()
	r.store.await(t, "acquire")
	res := <-got
	if res.err != nil {
		t.Fatalf("waiting acquire: %v", res.err)
	}
	b := res.l
	lc.tokens["B"] = b.Token()
	if e := r.events.await(t, leasehold.EventAcquire); e.Attempts != 2 || e.Wait != 2*acquireTook+releaseTook {
		t.Errorf("B's acquire event %+v: want 2 attempts and a wait of %s", e, 2*acquireTook+releaseTook)
	}
	r.store.failRenewals(leasehold.ErrNotHeld)
	if e := r.renewal(6 * time.Second); e.Err == nil {
		t.Fatal("B's renewal passed, want the refusal")
	}
	lost := r.events.await(t, leasehold.EventLost)
	lc.heldB = acquireTook + 6*time.Second + renewTook // its grant, the wait, its renewal
	if lost.Held != lc.heldB {
		t.Errorf("B's lost event: held %s, want %s", lost.Held, lc.heldB)
	}
	r.store.await(t, "release") // the client frees the store's side
	<-b.Done()
	r.store.failRenewals(nil)

	d, _ := r.acquire("exp")
	r.clock.advanceFiring(t, 20*time.Second) // past the deadline: no renewal is sent
	lost = r.events.await(t, leasehold.EventLost)
	lc.heldD = acquireTook + 20*time.Second
	if lost.Held != lc.heldD || lost.Token != d.Token() {
		t.Errorf("D's lost event %+v, want held %s", lost, lc.heldD)
	}
	r.store.await(t, "release")
}

// fenceRejection writes through fence middleware with the newer token,
// then the older: the older is refused and reported.
func (r *rig) fenceRejection(newer, older uint64) {
	var guard fence.MemoryGuard
	h := fence.MiddlewareOptions{OnStale: leasehold.FenceRejections(r.events)}.Wrap(&guard,
		http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for i, tok := range []uint64{newer, older} {
		req := httptest.NewRequest(http.MethodPut, "/docs/1", nil)
		req.Header.Set(fence.Header, strconv.FormatUint(tok, 10))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if want := []int{http.StatusOK, http.StatusConflict}[i]; rec.Code != want {
			r.t.Fatalf("write with token %d: %d, want %d", tok, rec.Code, want)
		}
	}
	e := r.events.await(r.t, leasehold.EventFenceReject)
	if e.Token != older || e.Key != "/docs/1" {
		r.t.Errorf("fence event %+v", e)
	}
}

// TestKeyAttributeLabelsEachMeasurement: with KeyAttribute, every
// measurement but a fence rejection carries leasehold.key (a fenced
// resource is a row or a path: too many); without it, none does (the
// lifecycle test's exact attribute sets).
func TestKeyAttributeLabelsEachMeasurement(t *testing.T) {
	r := newRig(t, true)
	key := attribute.String("leasehold.key", "k1")
	l, sent := r.acquire("k1")
	if got := collect(t, r.reader).count(lhotel.MetricLeasesHeld, key); got != 1 {
		t.Errorf("leases held on k1: %d, want 1", got)
	}
	held := r.release(l, sent)
	r.fenceRejection(2, 1)
	s := collect(t, r.reader)
	s.wantCount(lhotel.MetricAcquires, 1, granted, key)
	s.wantCount(lhotel.MetricLeasesHeld, 0, key)
	s.wantHist(lhotel.MetricStoreDuration, 1, seconds(acquireTook), opAcq, ok, key)
	s.wantHist(lhotel.MetricStoreDuration, 1, seconds(releaseTook), opRel, ok, key)
	s.wantHist(lhotel.MetricLeaseDuration, 1, seconds(held), attribute.String("leasehold.lease.end", "released"), key)
	s.wantCount(lhotel.MetricFenceRejections, 1)
	for m, n := range map[string]int{lhotel.MetricAcquires: 1, lhotel.MetricLeasesHeld: 1, lhotel.MetricStoreDuration: 2, lhotel.MetricFenceRejections: 1} {
		if got := s.points(m); got != n {
			t.Errorf("%s has %d series, want %d", m, got, n)
		}
	}
}
