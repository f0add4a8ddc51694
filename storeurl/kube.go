//go:build !leasehold_no_kube

package storeurl

import (
	"log/slog"

	"github.com/go-logr/logr"
	"github.com/leasehold-go/leasehold/kube"
	"k8s.io/klog/v2"
)

// kubeRow is Kubernetes Lease objects (coordination.k8s.io/v1); the build
// tag leasehold_no_kube leaves it out, with client-go (kube_leftout.go).
func kubeRow() Kind {
	return Kind{
		Name: "kube", Title: "Kubernetes Leases", Schemes: []string{"kube"},
		Package: "kube",
		URLs:    []string{"kube:///namespace?kubeconfig=PATH&context=NAME", "kube://in-cluster/namespace"},
		Usage: "kube:///[namespace][?kubeconfig=PATH&context=NAME] | kube://in-cluster/[namespace]\n" +
			"                        one Lease per key in the namespace (kubeconfig also from $KUBECONFIG, ~/.kube/config)",
		CheckURL: kube.CheckURL, Open: openWith(kube.OpenURL), LogTo: kubeLogTo,
		FaultBackends: []string{"kube"},
		Servers:       []string{"kube-apiserver", "etcd"},
		BuildTag:      "leasehold_no_kube",
		Token:         "max(the Lease's token, a resourceVersion read before the write) + 1, in the Lease's annotations; the store never deletes a Lease, and the resourceVersion floor keeps the token rising when someone else does",
		Notes: "compare-and-swap on resourceVersion; clock-free expiry: a waiter takes a lease after seeing its resourceVersion unchanged for the TTL on its own monotonic clock; " +
			"TTL 1 s to 24 h; leaseTransitions is not a fence; the user needs get, list, watch, create, update and patch on leases in the namespace",
	}
}

// kubeLogTo sends client-go's own log lines (klog: watch errors, the
// server's warnings) to l, or drops them when l is nil; klog has one
// logger per process.
func kubeLogTo(l *slog.Logger) {
	if l == nil {
		klog.SetLogger(logr.Discard())
		return
	}
	klog.SetSlogLogger(l)
}
