module github.com/leasehold-go/leasehold/serve/bench

go 1.26.0

require (
	github.com/leasehold-go/leasehold v0.1.0
	github.com/leasehold-go/leasehold/internal/testserver v0.1.0
	github.com/leasehold-go/leasehold/redis/goredis v0.1.0
	github.com/leasehold-go/leasehold/sqlite v0.1.0
	github.com/redis/go-redis/v9 v9.23.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/leasehold-go/leasehold/redis v0.1.0 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	modernc.org/libc v1.79.0 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
	modernc.org/sqlite v1.61.1 // indirect
)

replace (
	github.com/leasehold-go/leasehold => ../../
	github.com/leasehold-go/leasehold/internal/testserver => ../../internal/testserver
	github.com/leasehold-go/leasehold/redis => ../../redis
	github.com/leasehold-go/leasehold/redis/goredis => ../../redis/goredis
	github.com/leasehold-go/leasehold/sqlite => ../../sqlite
)
