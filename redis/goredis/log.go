package goredis

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/redis/go-redis/v9"
)

// SilenceLogger drops go-redis's own log lines, such as the one it prints
// for each failed dial of its connection pool; a store's error already says
// once what failed. go-redis has one logger per process (redis.SetLogger),
// so this affects every go-redis client in the program: call it from main,
// not from a library. Nothing in this package calls it.
func SilenceLogger() { redis.SetLogger(discard{}) }

type discard struct{}

func (discard) Printf(context.Context, string, ...any) {}

// SlogLogger returns a logger for redis.SetLogger that writes go-redis's
// own log lines (failed dials, pool and cluster trouble) to l at Warn, with
// driver=go-redis, instead of to the standard log package:
//
//	redis.SetLogger(goredis.SlogLogger(slog.Default()))
//
// go-redis has one logger per process, so set it from main. The leasehold
// command does, when LEASEHOLD_LOG is set.
func SlogLogger(l *slog.Logger) interface {
	Printf(ctx context.Context, format string, v ...any)
} {
	return slogLogger{l}
}

type slogLogger struct{ l *slog.Logger }

func (s slogLogger) Printf(ctx context.Context, format string, v ...any) {
	if ctx == nil {
		ctx = context.Background()
	}
	if s.l.Enabled(ctx, slog.LevelWarn) {
		s.l.LogAttrs(ctx, slog.LevelWarn, fmt.Sprintf(format, v...), slog.String("driver", "go-redis"))
	}
}
