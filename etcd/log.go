package etcd

import (
	"context"
	"log/slog"
	"slices"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// ZapLogger returns a *zap.Logger that writes into l: give it to the etcd
// client (clientv3.Config.Logger) to route the client's own log lines into
// slog instead of discarding them. Levels map one to one (zap's Error and
// above to slog's Error); the logger's fields become attributes, and every
// line carries driver=etcd. OpenURL's client logs this way into
// slog.Default().
func ZapLogger(l *slog.Logger) *zap.Logger {
	h := l.Handler().WithAttrs([]slog.Attr{slog.String("driver", "etcd")})
	return zap.New(slogCore{h: h})
}

// slogCore is a zapcore.Core over a slog.Handler.
type slogCore struct{ h slog.Handler }

func (c slogCore) Enabled(l zapcore.Level) bool {
	return c.h.Enabled(context.Background(), slogLevel(l))
}

func (c slogCore) With(fields []zapcore.Field) zapcore.Core {
	return slogCore{h: c.h.WithAttrs(attrs(fields))}
}

func (c slogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c slogCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	r := slog.NewRecord(e.Time, slogLevel(e.Level), e.Message, 0)
	if e.LoggerName != "" {
		r.AddAttrs(slog.String("logger", e.LoggerName))
	}
	r.AddAttrs(attrs(fields)...)
	return c.h.Handle(context.Background(), r)
}

func (slogCore) Sync() error { return nil }

// slogLevel maps a zap level to slog's.
func slogLevel(l zapcore.Level) slog.Level {
	switch {
	case l <= zapcore.DebugLevel:
		return slog.LevelDebug
	case l == zapcore.InfoLevel:
		return slog.LevelInfo
	case l == zapcore.WarnLevel:
		return slog.LevelWarn
	}
	return slog.LevelError
}

// attrs turns zap fields into slog attributes, in key order.
func attrs(fields []zapcore.Field) []slog.Attr {
	if len(fields) == 0 {
		return nil
	}
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range fields {
		f.AddTo(enc)
	}
	keys := make([]string, 0, len(enc.Fields))
	for k := range enc.Fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]slog.Attr, 0, len(keys))
	for _, k := range keys {
		out = append(out, slog.Any(k, enc.Fields[k]))
	}
	return out
}
