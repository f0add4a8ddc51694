module github.com/leasehold-go/leasehold/zookeeper/bench

go 1.25.0

require (
	github.com/go-zookeeper/zk v1.0.4
	github.com/leasehold-go/leasehold v0.1.0
	github.com/leasehold-go/leasehold/internal/testserver v0.1.0
	github.com/leasehold-go/leasehold/zookeeper v0.1.0
)

replace (
	github.com/leasehold-go/leasehold => ../../
	github.com/leasehold-go/leasehold/internal/testserver => ../../internal/testserver
	github.com/leasehold-go/leasehold/zookeeper => ../
)
