// Command kube-apiserver is a pinned build of the Kubernetes API server
// (k8s.io/kubernetes v1.37.2) for leasehold's kube tests. `go install` of it
// is refused because k8s.io/kubernetes' go.mod replaces its staging modules
// with local paths; this wrapper module maps each of them to the published
// k8s.io/X v0.37.2 instead and builds the same main.
// scripts/install/kube-apiserver.sh builds it into
// ${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
