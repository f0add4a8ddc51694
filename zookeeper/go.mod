module github.com/leasehold-go/leasehold/zookeeper

go 1.25.0

require github.com/leasehold-go/leasehold v0.1.0

require (
	github.com/go-zookeeper/zk v1.0.4
	github.com/leasehold-go/leasehold/internal/testserver v0.1.0
	go.uber.org/goleak v1.3.0
)

replace github.com/leasehold-go/leasehold => ../

replace github.com/leasehold-go/leasehold/internal/testserver => ../internal/testserver
