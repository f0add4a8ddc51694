package otel

import (
	"context"
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/leasehold-go/leasehold"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// span records the operation e reports as a span named name that ended
// now and took took. An acquire's or a release's span is a child of the
// span in the caller's context (e.Context), if any. A renewal's is a root
// linked to that span instead (the lease's context carries its Acquire
// caller's): a lease can outlive its caller's span by days, and its
// renewals would otherwise pile up in one trace. A refusal because the key
// is held is an outcome, not an error: only other errors set the span's
// status to Error.
func (o *Observer) span(ctx context.Context, name string, took time.Duration, e leasehold.Event, kvs ...attribute.KeyValue) {
	end := o.clock.Now()
	kvs = append(kvs, attrKey.String(e.Key))
	if e.Token != 0 {
		kvs = append(kvs, tokenAttr(e.Token))
	}
	opts := []trace.SpanStartOption{trace.WithTimestamp(end.Add(-took)), trace.WithAttributes(kvs...)}
	if e.Kind == leasehold.EventRenew {
		opts = append(opts, trace.WithNewRoot())
		if caller := trace.SpanContextFromContext(ctx); caller.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: caller}))
		}
	}
	_, s := o.tracer.Start(ctx, name, opts...)
	if e.Err != nil && !(e.Kind == leasehold.EventAcquire && errors.Is(e.Err, leasehold.ErrHeld)) {
		s.RecordError(e.Err, trace.WithTimestamp(end))
		s.SetStatus(codes.Error, e.Err.Error())
	}
	s.End(trace.WithTimestamp(end))
}

// tokenAttr is the leasehold.token attribute: an integer, or a decimal
// string for a token above the largest int64.
func tokenAttr(token uint64) attribute.KeyValue {
	if token > math.MaxInt64 {
		return attribute.String("leasehold.token", strconv.FormatUint(token, 10))
	}
	return attribute.Int64("leasehold.token", int64(token))
}
