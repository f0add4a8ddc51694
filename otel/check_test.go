package otel_test

import (
	"time"

	lhotel "github.com/leasehold-go/leasehold/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// checkMetrics checks every metric against what the lifecycle test did:
// grants A, C, B (2 attempts, the second after C's release) and D; one
// acquire refused as held; renewals of A (passed, jeopardy, passed on the
// retry) and of B (refused); A and C released; B lost (not_held), D lost
// (expired); one fence rejection.
func (r *rig) checkMetrics(lc lifecycle) {
	s := collect(r.t, r.reader)
	bWait := 2*acquireTook + releaseTook
	s.wantCount(lhotel.MetricAcquires, 4, granted)
	s.wantCount(lhotel.MetricAcquires, 1, heldOut)
	s.wantCount(lhotel.MetricAcquires, 0, errorOut)
	if n := s.points(lhotel.MetricAcquires); n != 3 {
		r.t.Errorf("%s has %d series, want granted, held and error", lhotel.MetricAcquires, n)
	}
	s.wantHist(lhotel.MetricAcquireDuration, 4, seconds(acquireTook, acquireTook, bWait, acquireTook), granted)
	s.wantHist(lhotel.MetricAcquireDuration, 1, seconds(acquireTook), heldOut)
	s.wantCount(lhotel.MetricContention, 2) // the refused acquire's attempt, B's first
	s.wantCount(lhotel.MetricLeasesHeld, 0)

	s.wantHist(lhotel.MetricStoreDuration, 3, seconds(acquireTook, acquireTook, acquireTook), opAcq, ok) // B made 2 attempts
	s.wantHist(lhotel.MetricStoreDuration, 1, seconds(acquireTook), opAcq, heldOut)
	s.wantHist(lhotel.MetricStoreDuration, 2, seconds(renewTook, renewTook), opRenew, ok)
	s.wantHist(lhotel.MetricStoreDuration, 1, seconds(renewTook), opRenew, errorOut)
	s.wantHist(lhotel.MetricStoreDuration, 1, seconds(renewTook), opRenew, notHeld)
	s.wantHist(lhotel.MetricStoreDuration, 2, seconds(releaseTook, releaseTook), opRel, ok)
	if n := s.points(lhotel.MetricStoreDuration); n != 6 {
		r.t.Errorf("%s has %d series, want 6", lhotel.MetricStoreDuration, n)
	}

	s.wantCount(lhotel.MetricRenewFailures, 1, attribute.String("leasehold.outcome", "jeopardy"))
	s.wantCount(lhotel.MetricRenewFailures, 1, attribute.String("leasehold.outcome", "lost"))
	s.wantCount(lhotel.MetricLosses, 1, attribute.String("leasehold.loss.reason", "not_held"))
	s.wantCount(lhotel.MetricLosses, 1, attribute.String("leasehold.loss.reason", "expired"))
	s.wantCount(lhotel.MetricLosses, 0, attribute.String("leasehold.loss.reason", "other"))
	if n := s.points(lhotel.MetricLosses); n != 3 {
		r.t.Errorf("%s has %d series, want 3", lhotel.MetricLosses, n)
	}
	s.wantHist(lhotel.MetricLeaseDuration, 2, seconds(lc.heldA, lc.heldC), attribute.String("leasehold.lease.end", "released"))
	s.wantHist(lhotel.MetricLeaseDuration, 2, seconds(lc.heldB, lc.heldD), attribute.String("leasehold.lease.end", "lost"))
	s.wantCount(lhotel.MetricFenceRejections, 1)
	if n := s.points(lhotel.MetricLeaseAge); n != 0 {
		r.t.Errorf("%s has %d points once every lease was released or lost, want none", lhotel.MetricLeaseAge, n)
	}
}

// wantSpan is one expected span.
type wantSpan struct {
	name  string
	took  time.Duration
	token uint64
	err   bool
}

// checkSpans checks the spans, in the order they ended.
func (r *rig) checkSpans(lc lifecycle) {
	A, B, C := lc.tokens["A"], lc.tokens["B"], lc.tokens["A"]+1
	want := []wantSpan{
		{"leasehold.acquire", acquireTook, A, false},
		{"leasehold.acquire", acquireTook, 0, false}, // held: an outcome, not an error
		{"leasehold.renew", renewTook, A, false},
		{"leasehold.renew", renewTook, A, true}, // jeopardy
		{"leasehold.renew", renewTook, A, false},
		{"leasehold.release", releaseTook, A, false},
		{"leasehold.acquire", acquireTook, C, false},
		{"leasehold.release", releaseTook, C, false},
		{"leasehold.acquire", 2*acquireTook + releaseTook, B, false},
		{"leasehold.renew", renewTook, B, true},      // refused
		{"leasehold.acquire", acquireTook, 1, false}, // D, on its own key
	}
	got := r.spans.Ended()
	if len(got) != len(want) {
		r.t.Fatalf("%d spans, want %d", len(got), len(want))
	}
	for i, w := range want {
		s := got[i]
		if s.Name() != w.name || s.EndTime().Sub(s.StartTime()) != w.took || s.Parent().IsValid() {
			r.t.Errorf("span %d: %s took %s (parent %v), want a root %s of %s", i, s.Name(), s.EndTime().Sub(s.StartTime()), s.Parent().IsValid(), w.name, w.took)
		}
		if tok := spanToken(s); tok != w.token {
			r.t.Errorf("span %d (%s): token %d, want %d", i, s.Name(), tok, w.token)
		}
		if isErr := s.Status().Code == codes.Error; isErr != w.err || isErr && len(s.Events()) != 1 {
			r.t.Errorf("span %d (%s): status %v with %d events, want error %v", i, s.Name(), s.Status(), len(s.Events()), w.err)
		}
		if key := spanAttr(s, "leasehold.key"); key.AsString() == "" {
			r.t.Errorf("span %d (%s) has no key", i, s.Name())
		}
	}
}

func spanAttr(s sdktrace.ReadOnlySpan, k attribute.Key) attribute.Value {
	for _, kv := range s.Attributes() {
		if kv.Key == k {
			return kv.Value
		}
	}
	return attribute.Value{}
}

func spanToken(s sdktrace.ReadOnlySpan) uint64 {
	return uint64(spanAttr(s, "leasehold.token").AsInt64())
}
