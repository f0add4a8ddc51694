//go:build leasehold_no_redis

package storeurl

// redlockRow names Redlock in a binary built with -tags leasehold_no_redis:
// its URLs are refused with ErrLeftOut. The row itself is in redlock.go.
func redlockRow() Kind { return leftOut("redlock", "Redlock", "leasehold_no_redis", "redlock") }
