module github.com/leasehold-go/leasehold/tools/sizes

go 1.26.0
