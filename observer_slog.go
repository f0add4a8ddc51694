package leasehold

import (
	"context"
	"errors"
	"log/slog"
)

// SlogObserver returns an Observer that logs each event on logger, with
// the key, the token, the operation, its latency or wait and its error, at
// these levels: Debug for what goes as planned (a grant, a refusal because
// the key is held, a renewal, a release); Warn for a failed renewal (the
// lease is in jeopardy) and a failed acquire or release; Error for a lost
// lease; Warn for a write a fence helper refused (EventFenceReject). It
// logs with the event's Context, so that a handler can add the caller's
// trace and span ids. It logs synchronously, on the client's goroutines:
// give it a handler that does not block for long.
func SlogObserver(logger *slog.Logger) Observer {
	return slogObserver{logger}
}

type slogObserver struct{ l *slog.Logger }

func (o slogObserver) Observe(e Event) {
	level, msg := slog.LevelDebug, "lease "+e.Kind.String()
	attrs := []slog.Attr{slog.String("op", e.Kind.String()), slog.String("key", e.Key)}
	if e.Token != 0 {
		attrs = append(attrs, slog.Uint64("token", e.Token))
	}
	switch e.Kind {
	case EventAcquire:
		attrs = append(attrs, slog.Duration("wait", e.Wait), slog.Int("attempts", e.Attempts))
		if e.Err != nil && !errors.Is(e.Err, ErrHeld) {
			level, msg = slog.LevelWarn, "lease acquire failed"
		}
	case EventRenew:
		attrs = append(attrs, slog.Duration("latency", e.Latency))
		if e.Err != nil {
			level, msg = slog.LevelWarn, "lease renewal failed"
			attrs = append(attrs, slog.Duration("remaining", e.Remaining))
		}
	case EventLost:
		level, msg = slog.LevelError, "lease lost"
		attrs = append(attrs, slog.Duration("held", e.Held))
	case EventRelease:
		attrs = append(attrs, slog.Duration("held", e.Held), slog.Duration("latency", e.Latency))
		if e.Err != nil {
			level, msg = slog.LevelWarn, "lease release failed"
		}
	case EventFenceReject:
		level, msg = slog.LevelWarn, "fence rejected a stale token"
	}
	if e.Err != nil {
		attrs = append(attrs, slog.String("error", e.Err.Error()))
	}
	ctx := e.Context
	if ctx == nil {
		ctx = context.Background() // an Event made by hand
	}
	if o.l.Enabled(ctx, level) {
		o.l.LogAttrs(ctx, level, msg, attrs...)
	}
}
