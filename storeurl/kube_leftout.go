//go:build leasehold_no_kube

package storeurl

// kubeRow names Kubernetes Leases in a binary built with -tags
// leasehold_no_kube: its URLs are refused with ErrLeftOut. The row itself
// is in kube.go.
func kubeRow() Kind { return leftOut("kube", "Kubernetes Leases", "leasehold_no_kube", "kube") }
