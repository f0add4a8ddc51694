//go:build leasehold_no_etcd

package storeurl

// etcdRow names etcd in a binary built with -tags leasehold_no_etcd:
// its URLs are refused with ErrLeftOut. The row itself is in etcd.go.
func etcdRow() Kind { return leftOut("etcd", "etcd", "leasehold_no_etcd", "etcd") }
