package kube_test

import (
	"context"
	"log"

	"github.com/leasehold-go/leasehold/kube"
)

// Open a store on the Leases of a namespace (it needs a cluster, so this
// example compiles but does not run). The kubeconfig is the URL's
// kubeconfig= file, else $KUBECONFIG, else ~/.kube/config, with its
// current context unless context= names one; kube://in-cluster/NAMESPACE
// uses the pod's service account. The namespace must exist; the user
// needs get, list, watch, create, update and patch on leases there.
func ExampleOpenURL() {
	ctx := context.Background()
	store, err := kube.OpenURL(ctx, "kube:///payments?context=prod")
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
}
