package main

import "context"

// quietRedis drops go-redis's own log lines (one per failed dial of its
// connection pool): the redis store's error already says what failed, once.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}
