module github.com/leasehold-go/leasehold/gocron

go 1.26.0

require (
	github.com/go-co-op/gocron/v2 v2.21.2
	github.com/google/uuid v1.6.0
	github.com/leasehold-go/leasehold v0.1.0
	github.com/leasehold-go/leasehold/sqlite v0.1.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/jonboulle/clockwork v0.5.0 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	golang.org/x/sys v0.49.0 // indirect
	modernc.org/libc v1.79.0 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
	modernc.org/sqlite v1.61.1 // indirect
)

replace github.com/leasehold-go/leasehold => ../

replace github.com/leasehold-go/leasehold/sqlite => ../sqlite
