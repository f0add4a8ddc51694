// Command etcd is a pinned build of the etcd server (go.etcd.io/etcd/server/v3
// v3.7.3) for leasehold's tests. `go install` of the server refuses because its
// go.mod has replace directives; this wrapper module builds the same main.
// scripts/install/etcd.sh builds it into ${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
