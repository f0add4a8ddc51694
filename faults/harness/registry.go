package harness

import (
	"fmt"
	"strings"
)

// BackendNames are the stores the harness can run, in table order.
var BackendNames = []string{"sqlite", "redis", "redlock", "postgres-lease", "postgres-advisory", "etcd", "azblob"}

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
	case "azblob":
		return &Azblob{}, nil
	}
	return nil, fmt.Errorf("faults: unknown store %q (known: %s)", name, strings.Join(BackendNames, ", "))
}
