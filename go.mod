module github.com/leasehold-go/leasehold

go 1.26
