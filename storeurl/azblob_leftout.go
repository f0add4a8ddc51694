//go:build leasehold_no_azblob

package storeurl

// azblobRow names Azure Blob in a binary built with -tags leasehold_no_azblob:
// its URLs are refused with ErrLeftOut. The row itself is in azblob.go.
func azblobRow() Kind { return leftOut("azblob", "Azure Blob", "leasehold_no_azblob", "azblob") }
