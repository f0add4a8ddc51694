//go:build leasehold_no_s3

package storeurl

// s3Row names S3 in a binary built with -tags leasehold_no_s3:
// its URLs are refused with ErrLeftOut. The row itself is in s3.go.
func s3Row() Kind { return leftOut("s3", "S3", "leasehold_no_s3", "s3") }
