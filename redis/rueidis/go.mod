module github.com/leasehold-go/leasehold/redis/rueidis

go 1.25.0

require (
	github.com/leasehold-go/leasehold v0.1.0
	github.com/leasehold-go/leasehold/internal/testserver v0.1.0
	github.com/leasehold-go/leasehold/redis v0.1.0
	github.com/redis/rueidis v1.0.79
)

require (
	go.uber.org/goleak v1.3.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
)

replace (
	github.com/leasehold-go/leasehold => ../../
	github.com/leasehold-go/leasehold/internal/testserver => ../../internal/testserver
	github.com/leasehold-go/leasehold/redis => ../
)
