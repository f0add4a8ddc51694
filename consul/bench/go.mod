module github.com/leasehold-go/leasehold/consul/bench

go 1.25.5

require (
	github.com/hashicorp/consul/api v1.33.2
	github.com/leasehold-go/leasehold v0.1.0
	github.com/leasehold-go/leasehold/consul v0.1.0
	github.com/leasehold-go/leasehold/internal/testserver v0.1.0
)

require (
	github.com/armon/go-metrics v0.4.1 // indirect
	github.com/fatih/color v1.16.0 // indirect
	github.com/go-viper/mapstructure/v2 v2.4.0 // indirect
	github.com/hashicorp/errwrap v1.1.0 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/hashicorp/go-hclog v1.5.0 // indirect
	github.com/hashicorp/go-immutable-radix v1.3.1 // indirect
	github.com/hashicorp/go-multierror v1.1.1 // indirect
	github.com/hashicorp/go-rootcerts v1.0.2 // indirect
	github.com/hashicorp/golang-lru v0.5.4 // indirect
	github.com/hashicorp/serf v0.10.1 // indirect
	github.com/mattn/go-colorable v0.1.13 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/mitchellh/go-homedir v1.1.0 // indirect
	golang.org/x/exp v0.0.0-20250808145144-a408d31f581a // indirect
	golang.org/x/sys v0.35.0 // indirect
)

replace (
	github.com/leasehold-go/leasehold => ../../
	github.com/leasehold-go/leasehold/consul => ../
	github.com/leasehold-go/leasehold/internal/testserver => ../../internal/testserver
)
