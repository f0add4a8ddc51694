package otel

import (
	"context"
	"math"
	"strconv"
	"time"

	"github.com/leasehold-go/leasehold"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// span records the operation e reports as a root span named name that
// ended now and took took.
func (o *Observer) span(name string, took time.Duration, e leasehold.Event, kvs ...attribute.KeyValue) {
	end := time.Now()
	kvs = append(kvs, attrKey.String(e.Key))
	if e.Token != 0 {
		kvs = append(kvs, tokenAttr(e.Token))
	}
	_, s := o.tracer.Start(context.Background(), name,
		trace.WithNewRoot(), trace.WithTimestamp(end.Add(-took)), trace.WithAttributes(kvs...))
	if e.Err != nil {
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
