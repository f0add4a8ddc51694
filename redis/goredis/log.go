package goredis

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// SilenceLogger drops go-redis's own log lines, such as the one it prints
// for each failed dial of its connection pool; a store's error already says
// once what failed. go-redis has one logger per process (redis.SetLogger),
// so this affects every go-redis client in the program: call it from main,
// as the leasehold command does, not from a library. Nothing in this
// package calls it.
func SilenceLogger() { redis.SetLogger(discard{}) }

type discard struct{}

func (discard) Printf(context.Context, string, ...any) {}
