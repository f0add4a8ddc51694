//go:build leasehold_no_redis

package storeurl

// redisRow names Redis in a binary built with -tags leasehold_no_redis:
// its URLs are refused with ErrLeftOut. The row itself is in redis.go.
func redisRow() Kind { return leftOut("redis", "Redis", "leasehold_no_redis", "redis", "rediss") }
