package harness

import (
	"fmt"
	"strings"
)

// BackendNames are the stores the harness can run, in table order.
var BackendNames = []string{"sqlite", "redis", "redlock", "postgres-lease", "postgres-advisory", "etcd", "consul", "zookeeper", "azblob", "s3"}

// SuiteNames are the stores the suite runs unless -stores names others:
// every backend but those of notByDefault, which run when named.
func SuiteNames() []string {
	var out []string
	for _, n := range BackendNames {
		if _, skip := notByDefault[n]; !skip {
			out = append(out, n)
		}
	}
	return out
}

// notByDefault are the backends the suite leaves out unless -stores names
// them, and why.
var notByDefault = map[string]string{
	// Its 15 s minimum TTL (Azure's shortest lease) makes one pass of its
	// fault classes take about 12 minutes where the others take one or two.
	"azblob": "one pass takes about 12 minutes on its 15 s minimum TTL",
}

// NewBackend returns the backend called name.
func NewBackend(name string) (Backend, error) {
	switch name {
	case "sqlite":
		return &SQLite{}, nil
	case "redis":
		return &Redis{}, nil
	case "redlock":
		return &Redlock{}, nil
	case "postgres-lease":
		return &Postgres{Mode: "lease"}, nil
	case "postgres-advisory":
		return &Postgres{Mode: "advisory"}, nil
	case "etcd":
		return &Etcd{}, nil
	case "consul":
		return &Consul{}, nil
	case "consul-dev": // not in BackendNames: see ConsulDev
		return &ConsulDev{}, nil
	case "zookeeper":
		return &ZooKeeper{}, nil
	case "s3":
		return &S3{}, nil
	case "azblob":
		return &Azblob{}, nil
	}
	return nil, fmt.Errorf("faults: unknown store %q (known: %s)", name, strings.Join(BackendNames, ", "))
}
