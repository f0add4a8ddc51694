package harness

import (
	"fmt"
	"strings"

	"github.com/leasehold-go/leasehold/storeurl"
)

// BackendNames are the stores the harness can run, in the store table's
// order: every row's FaultBackends (storeurl.Stores).
func BackendNames() []string {
	var out []string
	for _, k := range storeurl.Stores() {
		out = append(out, k.FaultBackends...)
	}
	return out
}

// SuiteNames are the stores the suite runs unless -stores names others:
// every backend but those of a row with FaultsOnlyNamed (for azblob, one
// pass of its fault classes takes about 12 minutes on its 15 s minimum TTL,
// where the others take one or two), which run when named.
func SuiteNames() []string {
	var out []string
	for _, k := range storeurl.Stores() {
		if k.FaultsOnlyNamed == "" {
			out = append(out, k.FaultBackends...)
		}
	}
	return out
}

// BackendServers returns the servers that the backend called name starts
// (the store table's Servers): each is installed by
// scripts/install/<server>.sh.
func BackendServers(name string) ([]string, error) {
	for _, k := range storeurl.Stores() {
		for _, b := range k.FaultBackends {
			if b == name {
				return k.Servers, nil
			}
		}
	}
	return nil, unknownBackend(name)
}

func unknownBackend(name string) error {
	return fmt.Errorf("faults: unknown store %q (known: %s)", name, strings.Join(BackendNames(), ", "))
}

// NewBackend returns the backend called name. Adding a store's backend
// means its file, backend_<store>.go, and its case here;
// TestBackendsFollowStoreTable checks each name of the store table.
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
	case "dynamodb":
		return &DynamoDB{}, nil
	case "kube":
		return &Kube{}, nil
	case "remote-sqlite":
		return NewRemote(name, &SQLite{}, false), nil
	case "remote-redis":
		return NewRemote(name, &Redis{}, false), nil
	case "remote-postgres":
		return NewRemote(name, &Postgres{Mode: "lease"}, false), nil
	case "remote-etcd":
		return NewRemote(name, &Etcd{}, false), nil
	case "remote-postgres-advisory": // by name only: kept grants, see Remote
		return NewRemote(name, &Postgres{Mode: "advisory"}, true), nil
	}
	return nil, unknownBackend(name)
}
