//go:build leasehold_no_consul

package storeurl

// consulRow names Consul in a binary built with -tags leasehold_no_consul:
// its URLs are refused with ErrLeftOut. The row itself is in consul.go.
func consulRow() Kind { return leftOut("consul", "Consul", "leasehold_no_consul", "consul") }
