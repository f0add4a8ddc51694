package otel

import (
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// The metric names (OpenTelemetry's; docs/metrics.md gives the names a
// Prometheus exporter makes of them).
const (
	MetricAcquires        = "leasehold.acquires"
	MetricAcquireDuration = "leasehold.acquire.duration"
	MetricContention      = "leasehold.acquire.contention"
	MetricLeasesHeld      = "leasehold.leases.held"
	MetricLeaseDuration   = "leasehold.lease.duration"
	MetricLeaseAge        = "leasehold.lease.age"
	MetricRenewFailures   = "leasehold.renew.failures"
	MetricLosses          = "leasehold.lease.losses"
	MetricStoreDuration   = "leasehold.store.duration"
	MetricFenceRejections = "leasehold.fence.rejections"
)

// The attributes.
var (
	attrKey     = attribute.Key("leasehold.key")
	attrOutcome = attribute.Key("leasehold.outcome")
	attrReason  = attribute.Key("leasehold.loss.reason")
	attrEnd     = attribute.Key("leasehold.lease.end")
	attrOp      = attribute.Key("leasehold.operation")

	opAcquire = attrOp.String("acquire")
	opRenew   = attrOp.String("renew")
	opRelease = attrOp.String("release")
)

// The histograms' bucket boundaries, in seconds.
var (
	// storeBuckets: a store call, from a local SQLite file to a slow
	// remote quorum.
	storeBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
	// waitBuckets: an acquire, from one round trip to a long wait.
	waitBuckets = []float64{0.001, 0.005, 0.025, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600}
	// holdBuckets: a lease, from a short job to a long-lived leader.
	holdBuckets = []float64{0.1, 1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 24 * 3600}
)

// instruments are the observer's metrics.
type instruments struct {
	acquires, contention, renewFailures, losses, fenceRejections metric.Int64Counter
	held                                                         metric.Int64UpDownCounter
	acquireWait, leaseDuration, storeDuration                    metric.Float64Histogram
}

// newInstruments makes the instruments on m.
func newInstruments(m metric.Meter) (instruments, error) {
	var i instruments
	var errs [9]error
	i.acquires, errs[0] = m.Int64Counter(MetricAcquires, metric.WithUnit("{acquire}"),
		metric.WithDescription("Acquire and Claim calls, by outcome: granted, held or error."))
	i.acquireWait, errs[1] = m.Float64Histogram(MetricAcquireDuration, metric.WithUnit("s"),
		metric.WithDescription("Time from an Acquire or Claim call to its return, by outcome."),
		metric.WithExplicitBucketBoundaries(waitBuckets...))
	i.contention, errs[2] = m.Int64Counter(MetricContention, metric.WithUnit("{attempt}"),
		metric.WithDescription("Store attempts of an acquire that did not grant the key (mostly answered held)."))
	i.held, errs[3] = m.Int64UpDownCounter(MetricLeasesHeld, metric.WithUnit("{lease}"),
		metric.WithDescription("Leases held now."))
	i.leaseDuration, errs[4] = m.Float64Histogram(MetricLeaseDuration, metric.WithUnit("s"),
		metric.WithDescription("How long each lease was held, from its grant to its release or loss."),
		metric.WithExplicitBucketBoundaries(holdBuckets...))
	i.renewFailures, errs[5] = m.Int64Counter(MetricRenewFailures, metric.WithUnit("{renewal}"),
		metric.WithDescription("Failed renewals, by outcome: jeopardy (retried) or lost (refused)."))
	i.losses, errs[6] = m.Int64Counter(MetricLosses, metric.WithUnit("{lease}"),
		metric.WithDescription("Leases lost without release, by reason: expired, not_held or other."))
	i.storeDuration, errs[7] = m.Float64Histogram(MetricStoreDuration, metric.WithUnit("s"),
		metric.WithDescription("Store calls, by operation (acquire, renew, release) and outcome."),
		metric.WithExplicitBucketBoundaries(storeBuckets...))
	i.fenceRejections, errs[8] = m.Int64Counter(MetricFenceRejections, metric.WithUnit("{write}"),
		metric.WithDescription("Writes a fence helper refused because their token was stale."))
	return i, errors.Join(errs[:]...)
}
