module github.com/leasehold-go/leasehold/redis/bench

go 1.26.0

require (
	github.com/bsm/redislock v0.9.4
	github.com/go-redsync/redsync/v4 v4.18.0
	github.com/leasehold-go/leasehold v0.1.0
	github.com/leasehold-go/leasehold/internal/testserver v0.1.0
	github.com/leasehold-go/leasehold/redis v0.1.0
	github.com/leasehold-go/leasehold/redis/goredis v0.1.0
	github.com/leasehold-go/leasehold/redis/rueidis v0.1.0
	github.com/redis/go-redis/v9 v9.23.0
	github.com/redis/rueidis v1.0.79
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)

replace (
	github.com/leasehold-go/leasehold => ../../
	github.com/leasehold-go/leasehold/internal/testserver => ../../internal/testserver
	github.com/leasehold-go/leasehold/redis => ../
	github.com/leasehold-go/leasehold/redis/goredis => ../goredis
	github.com/leasehold-go/leasehold/redis/rueidis => ../rueidis
)
