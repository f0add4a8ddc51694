module github.com/leasehold-go/leasehold/internal/testserver

go 1.25.0
